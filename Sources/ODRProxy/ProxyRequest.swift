import ODRTransports

/// A request as the proxy sees it, before anything is sent upstream.
public struct ProxyRequest: Sendable {
  /// One header as received, in order (names keep their case).
  public struct Header: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
      self.name = name
      self.value = value
    }
  }

  public var method: String
  /// Where the request goes: `https` (a CONNECT the proxy intercepts, or a
  /// base URL's origin) or `http` (an absolute-form request).
  public var scheme: String
  /// The connection's host: the CONNECT target, the absolute-form
  /// authority, or the base URL's host.
  public var host: String
  public var port: Int
  /// The path and query (origin-form), as sent.
  public var target: String
  public var headers: [Header]
  /// The other places that name the host the request is for, each with the
  /// name it gives: `CONNECT` (its line), `SNI` (the TLS client hello),
  /// `absolute-form` (the request line's authority). Each must equal
  /// ``host``, as the `Host` header must.
  public var routing: [(place: String, host: String)]
  /// The body's hex SHA-256, when the request is SigV4-signed without
  /// naming its body's hash in a header (``needsBodyHash``): what its
  /// signature signs, which the proxy checks and signs again.
  public var bodyHash: String?

  public init(method: String, scheme: String, host: String, port: Int, target: String, headers: [Header],
              routing: [(place: String, host: String)] = []) {
    self.method = method
    self.scheme = scheme
    self.host = host
    self.port = port
    self.target = target
    self.headers = headers
    self.routing = routing
  }

  /// Sets ``bodyHash`` to `body`'s when the decision needs it.
  public mutating func hashBody(_ body: some Collection<UInt8>) {
    if needsBodyHash { bodyHash = SigV4Signer.payloadHash(Array(body)) }
  }

  /// Whether the decision needs ``bodyHash``: the request carries a SigV4
  /// signature and no `x-amz-content-sha256` header.
  var needsBodyHash: Bool {
    let signed = headers.contains { $0.name.lowercased() == "authorization" && $0.value.hasPrefix("AWS4-HMAC-SHA256 ") }
      || target.contains("X-Amz-Algorithm=AWS4-HMAC-SHA256")
    return signed && !headers.contains { $0.name.lowercased() == "x-amz-content-sha256" }
  }
}
