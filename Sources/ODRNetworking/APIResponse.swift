import FoundationNetworking

/// A successful (2xx) response: the decoded value, the status and headers.
public struct APIResponse<Value: Sendable>: Sendable {
  public let value: Value
  public let status: Int
  /// The URL that answered, after redirects (key values redacted).
  public let url: String
  private let response: HTTPURLResponse

  init(value: Value, response: HTTPURLResponse, url: String) {
    self.value = value
    self.status = response.statusCode
    self.url = url
    self.response = response
  }

  /// Header names as the server sent them (built when asked).
  public var headers: [String: String] {
    var result: [String: String] = [:]
    for (name, value) in response.allHeaderFields {
      if let name = name as? String, let value = value as? String { result[name] = value }
    }
    return result
  }
}
