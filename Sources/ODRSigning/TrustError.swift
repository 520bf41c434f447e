public import ODRBase

/// The one error type of ODRSigning: signatures, keys and age encryption.
/// Messages never contain key material or plaintext.
public typealias TrustError = DomainError<TrustDomain>

/// The domain of ``TrustError``: "trust".
public enum TrustDomain: ErrorDomain {
  public static let name = "trust"
}

extension DomainError where Domain == TrustDomain {
  /// This error with `place` (a flag, a file, a variable) before its
  /// message: the same code, this error as the cause.
  public func at(_ place: String) -> TrustError {
    TrustError(code, "\(place): \(message)", underlying: self)
  }
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
