public import FoundationEssentials

/// One http(s) or s3 catalog location and what a request to it carries:
/// the catalog token for its origin (odr.json `"auth"`), the S3 access
/// (credentials from the environment, odr.json's `"endpoint"`), and how long
/// a transfer may stall. A transport is made from it (ODRHTTP's
/// `HTTPTransport` in `odr`, ODRNetworking's `URLSessionTransport` in apps).
public struct NetworkLocation: Sendable {
  /// The location (http, https or s3).
  public var url: URL
  /// The header for the location's origin, if any.
  public var credential: HTTPCredential?
  /// How `s3://` URLs are reached; nil for http(s).
  public var s3: S3Access?
  /// How long a transfer may go without a byte.
  public var stall: Duration

  public init(url: URL, credential: HTTPCredential? = nil, s3: S3Access? = nil, stall: Duration = .seconds(15)) {
    self.url = url
    self.credential = credential
    self.s3 = s3
    self.stall = stall
  }
}
