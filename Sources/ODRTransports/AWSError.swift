public import ODRBase

/// A failure of an AWS call other than a download: finding credentials
/// (the web identity token, STS, GitHub's OIDC token) and KMS. Messages say
/// which step failed and what to check; they never hold a token, a
/// credential or a file key.
public typealias AWSError = DomainError<AWSDomain>

/// The domain of ``AWSError``: "aws".
public enum AWSDomain: ErrorDomain {
  public static let name = "aws"

  public static func isTransient(_ code: ErrorCode<DomainError<Self>>) -> Bool { code == .service }
}

extension ErrorCode where Owner == AWSError {
  /// The web identity token (`AWS_WEB_IDENTITY_TOKEN_FILE`, or GitHub's
  /// OIDC endpoint) could not be had (exit 3).
  public static let noToken = Self("no-token")
  /// STS refused to give the role's credentials for the token: no such
  /// role, a trust policy that does not admit the token, an expired or
  /// invalid token (exit 10).
  public static let roleRefused = Self("role-refused")
  /// AWS refused the credentials themselves: unknown, expired, or a
  /// signature that does not verify (exit 10).
  public static let credentialsRefused = Self("credentials-refused")
  /// The key policy or the role's policy does not allow the KMS call
  /// (`kms:Decrypt`, `kms:Encrypt`) (exit 10).
  public static let keyDenied = Self("key-denied")
  /// The KMS key is disabled or pending deletion (exit 1: the key's owner
  /// enables it; nothing on this side can).
  public static let keyDisabled = Self("key-disabled")
  /// KMS has no such key in the region asked: a wrong ARN, region or
  /// endpoint (exit 3).
  public static let keyNotFound = Self("key-not-found")
  /// KMS refused the ciphertext: it was made for another encryption
  /// context (another bundle or tag), or under another key, or is damaged
  /// (exit 4, as any pack that does not open).
  public static let wrongContext = Self("wrong-context")
  /// Any other answer of STS or KMS: throttling, an internal error, an
  /// answer odr cannot read (exit 7; worth a retry).
  public static let service = Self("service")
}
