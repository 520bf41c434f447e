/// A successful (2xx) response: the decoded value, the status and headers.
public struct APIResponse<Value: Sendable>: Sendable {
  public let value: Value
  public let status: Int
  /// Header names as the server sent them.
  public let headers: [String: String]
  /// The URL that answered, after redirects (key values redacted).
  public let url: String
}
