public import FoundationEssentials

/// One request and its whole answer, bounded: the API calls odr makes
/// besides downloads — AWS STS and KMS, GitHub's OIDC token. ODRHTTP's
/// HTTPTransport serves it in `odr` (HTTP1Client), ODRNetworking's
/// URLSessionTransport in apps.
public protocol HTTPExchanging: Sendable {
  /// Sends `request` and returns the answer's status and body, refusing a
  /// body over `limit` bytes. A request that gets no answer (refused, a
  /// dead host past the connect limit, a stall) throws
  /// `ResourceError(.network)`, whose message names the host, never the
  /// request's headers or body.
  func exchange(_ request: HTTPExchangeRequest, limit: Int) async throws -> HTTPExchangeResponse
}

/// A request of ``HTTPExchanging``: its body is in memory (an API call's).
public struct HTTPExchangeRequest: Sendable {
  public var method: String
  public var url: URL
  /// Sent as given (`Host` is added when absent).
  public var headers: [(String, String)]
  public var body: Data

  public init(method: String, url: URL, headers: [(String, String)] = [], body: Data = Data()) {
    (self.method, self.url, self.headers, self.body) = (method, url, headers, body)
  }
}

/// What ``HTTPExchanging/exchange(_:limit:)`` got back.
public struct HTTPExchangeResponse: Sendable {
  public var status: Int
  public var body: Data

  public init(status: Int, body: Data) {
    (self.status, self.body) = (status, body)
  }
}
