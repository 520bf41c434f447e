public import ODRBase
/// The one error type of ODRSigning: signatures, keys and age encryption.
/// Messages never contain key material or plaintext.
public struct TrustError: Error, Sendable, CustomStringConvertible {
  /// What kind of failure this is (its codes: `ErrorCode where Owner == TrustError`).
  public typealias Code = ErrorCode<TrustError>

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

}

extension TrustError: CodedError {
  public var domain: String { "trust" }
  public var isTransient: Bool { false }
}

extension ErrorCode where Owner == TrustError {
  /// A key, recipient or identity string that is not well formed.
  public static let invalidKey = Self("invalid-key")
  /// A signature file that is malformed, or a signature that does not verify.
  public static let badSignature = Self("bad-signature")
  /// An age file whose header does not parse: not age v1, a malformed or
  /// misplaced stanza, a bad MAC line, a missing payload nonce.
  public static let ageHeader = Self("age-header")
  /// An age file whose header parses and opens, but whose MAC does not
  /// verify: the header was changed after it was written.
  public static let ageHeaderMAC = Self("age-header-mac")
  /// An age file whose payload is truncated, extended or tampered with.
  public static let agePayload = Self("age-payload")
  /// An ASCII-armored age file whose armor is not strict PEM.
  public static let ageArmor = Self("age-armor")
  /// An age file encrypted with a passphrase (scrypt): odr opens files
  /// encrypted to recipients only.
  public static let agePassphrase = Self("age-passphrase")
  /// None of the identities can open the age file: not a recipient.
  public static let noIdentity = Self("no-identity")
}
