public import ODRBase

/// The one error type of ODRResources: a code, a message that says what
/// happened and what to do, and the path or tag it is about.
public typealias ResourceError = DomainError<ResourcesDomain>

/// The domain of ``ResourceError``: "resources"; a network failure may pass: transient.
public enum ResourcesDomain: ErrorDomain {
  public static let name = "resources"
  public static func isTransient(_ code: ResourceError.Code) -> Bool { code == .network }
}

extension ErrorCode where Owner == ResourceError {
  /// A publisher folder or catalog that breaks the format's rules.
  public static let invalidSource = Self("invalid-source")
  /// A file, folder or tag that does not exist (Apple's 4994 for tags).
  public static let notFound = Self("not-found")
  /// Bytes whose SHA-256 or size do not match the catalog.
  public static let integrity = Self("integrity")
  /// A state file of odr's (trust state, location bindings, the catalog
  /// index) that is there but cannot be read: odr refuses rather than
  /// start over (exit 4, like integrity).
  public static let unreadableState = Self("unreadable-state")
  /// Reading or writing the file system failed.
  public static let io = Self("io")
  /// A download failed: connection refused or dropped, HTTP error status.
  public static let network = Self("network")
  /// The source refused the credentials (HTTP 401/403, S3 AccessDenied or
  /// SignatureDoesNotMatch), or there were none and it wants some.
  public static let accessDenied = Self("access-denied")
  /// The disk is full (Apple's 4992).
  public static let outOfSpace = Self("out-of-space")
  /// A secrets tag asked for as files: its keys only go to the keyring
  /// (`odr fetch`) or to memory (`odr exec --fetch`), never to disk.
  public static let secretsTag = Self("secrets-tag")
}
