public import FoundationEssentials

/// One typed request for ``APIClient``: method, path (relative to the
/// client's base URL, or absolute), query items, headers, body, the key to
/// attach, and how to decode the response body.
///
/// ```swift
/// struct Forecast: Decodable, Sendable { let summary: String }
/// let request = APIRequest<Forecast>(path: "/v1/forecast", query: ["city": "Oslo"], key: "Weather")
/// ```
public struct APIRequest<Response: Sendable>: Sendable {
  public var method: String
  /// A path relative to the base URL, or an absolute URL string. Checked by
  /// the client's `URLPolicy`.
  public var path: String
  /// Query items, percent-encoded by the client (everything but unreserved
  /// characters, so `+` and `&` in a value stay data).
  public var query: [(name: String, value: String)]
  public var headers: [String: String]
  public var body: Data?
  /// The name of the key to attach (as its metadata says), if any.
  public var key: String?
  /// Turns the response body into `Response`.
  public var decode: @Sendable (Data) throws -> Response

  /// A request whose body is decoded by `decode`.
  public init(method: String = "GET", path: String, query: KeyValuePairs<String, String> = [:], headers: [String: String] = [:],
              body: Data? = nil, key: String? = nil, decode: @escaping @Sendable (Data) throws -> Response) {
    self.method = method.uppercased()
    self.path = path
    self.query = query.map { ($0.key, $0.value) }
    self.headers = headers
    self.body = body
    self.key = key
    self.decode = decode
  }

  /// True for methods that may be retried: sending them twice has the
  /// effect of sending them once (RFC 9110 §9.2.2).
  public var isIdempotent: Bool { ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"].contains(method) }
}

extension APIRequest where Response: Decodable {
  /// A request whose JSON response is decoded into `Response`.
  public init(method: String = "GET", path: String, query: KeyValuePairs<String, String> = [:], headers: [String: String] = [:],
              body: Data? = nil, key: String? = nil) {
    self.init(method: method, path: path, query: query, headers: headers, body: body, key: key) { data in
      try JSONDecoder().decode(Response.self, from: data)
    }
  }
}

extension APIRequest where Response == Data {
  /// A request whose response body is returned as it is.
  public static func data(method: String = "GET", path: String, query: KeyValuePairs<String, String> = [:], headers: [String: String] = [:],
                          body: Data? = nil, key: String? = nil) -> APIRequest<Data> {
    APIRequest(method: method, path: path, query: query, headers: headers, body: body, key: key) { $0 }
  }
}
