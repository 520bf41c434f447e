public import ODRBase
/// Why an `APIClient` request failed. Key values never appear in it: the
/// client redacts them from every message, URL and body excerpt.
///
/// It lives here, beside the URL policy, rather than in ODRNetworking (which
/// re-exports it): the CLI's one table of exit codes handles it without
/// `odr` linking URLSession (Foundation networking and libcurl).
public struct APIError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
  /// What kind of failure this is (its codes: `ErrorCode where Owner == APIError`).
  public typealias Code = ErrorCode<APIError>

  public let code: Code
  /// What happened, for a person to read.
  public let message: String
  /// The HTTP status, for ``Code/status``.
  public let status: Int?
  /// The start of the response body (at most 512 bytes), for ``Code/status``.
  public let bodyExcerpt: String?
  /// The whole response body as text, for ``Code/status``, with the key's
  /// value redacted like everything else (`odr http --fail-with-body`).
  public let body: String?
  /// The cause, for ``Code/transport`` and ``Code/timeout``: URLSession's
  /// `URLError`, with its code only (its user info holds the URL, which may
  /// carry the key).
  public let underlying: (any Error)?

  package init(_ code: Code, _ message: String, status: Int? = nil, bodyExcerpt: String? = nil, body: String? = nil,
               underlying: (any Error)? = nil) {
    self.code = code
    self.message = message
    self.status = status
    self.bodyExcerpt = bodyExcerpt
    self.body = body
    self.underlying = underlying
  }

  public var debugDescription: String { "APIError(\(code.rawValue), \(message))" }
}

extension APIError: CodedError {
  public var domain: String { "http" }
  /// A timeout, a dropped connection, or a status the server may answer
  /// differently later (408, 429, 5xx).
  public var isTransient: Bool {
    code == .timeout || code == .transport || (code == .status && (status.map { $0 == 408 || $0 == 429 || $0 >= 500 } ?? false))
  }
}

extension ErrorCode where Owner == APIError {
  /// The URL string was refused by the policy.
  public static let invalidURL = Self("invalid-url")
  /// The key asked for cannot be attached (no header or query in its metadata).
  public static let keyUnusable = Self("key-unusable")
  /// A header name or value that cannot be one line of a request (CR, LF, NUL).
  public static let invalidHeader = Self("invalid-header")
  /// The connection failed or dropped.
  public static let transport = Self("transport")
  /// No answer within the timeout.
  public static let timeout = Self("timeout")
  /// The server answered with a status outside 2xx.
  public static let status = Self("status")
  /// The body could not be decoded.
  public static let decoding = Self("decoding")
  /// More than the allowed number of redirects.
  public static let tooManyRedirects = Self("too-many-redirects")
  /// A body larger than the client keeps in memory (its `maxBodyBytes`).
  public static let tooLarge = Self("too-large")
}
