public import ODRBase
/// The one error type of ODRSigning: signatures, keys and age encryption.
/// Messages never contain key material or plaintext.
public struct TrustError: Error, Sendable, CustomStringConvertible {
  /// What kind of failure this is. New codes may be added.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    /// A stable identifier, used in `--json` output.
    public let rawValue: String
    package init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// A key, recipient or identity string that is not well formed.
    public static let invalidKey = Code("invalid-key")
    /// A signature file that is malformed, or a signature that does not verify.
    public static let badSignature = Code("bad-signature")
    /// An age file whose header does not parse: not age v1, a malformed or
    /// misplaced stanza, a bad MAC line, a missing payload nonce.
    public static let ageHeader = Code("age-header")
    /// An age file whose header parses and opens, but whose MAC does not
    /// verify: the header was changed after it was written.
    public static let ageHeaderMAC = Code("age-header-mac")
    /// An age file whose payload is truncated, extended or tampered with.
    public static let agePayload = Code("age-payload")
    /// An ASCII-armored age file whose armor is not strict PEM.
    public static let ageArmor = Code("age-armor")
    /// An age file encrypted with a passphrase (scrypt): odr opens files
    /// encrypted to recipients only.
    public static let agePassphrase = Code("age-passphrase")
    /// None of the identities can open the age file: not a recipient.
    public static let noIdentity = Code("no-identity")
  }

  /// What kind of failure this is.
  public let code: Code
  /// What happened, for a person to read.
  public let message: String

  /// What failed below, when there is a cause to keep: an `Errno`, a
  /// transport or decoding error, another module's error. For programs;
  /// ``message`` already says what it means for a person.
  public let underlying: (any Error)?

  /// Creates an error.
  public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
    self.code = code
    self.message = message
    self.underlying = underlying
  }

  /// This error with `place` (a flag, a file, a variable) before its
  /// message: the same code, this error as the cause.
  public func at(_ place: String) -> TrustError {
    TrustError(code, "\(place): \(message)", underlying: self)
  }

  public var description: String { message }
}

extension TrustError: ODRError {
  public var domain: String { "trust" }
  public var kind: String { code.rawValue }
  public var isTransient: Bool { false }
}
