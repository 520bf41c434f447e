package import FoundationEssentials
package import ODRKeys
package import ODRResources

/// What only `odr-net` can do, because it links the HTTP stacks
/// (AsyncHTTPClient for downloads, URLSession for `odr http`): the lean `odr`
/// has none and hands such commands over (``NetworkHandoff``).
package protocol NetworkCommands: Sendable {
  /// The transport for http(s) catalogs.
  func transport() -> any BlobTransport
  /// `odr url check`, its strings already read.
  func checkURLs(_ options: URLCheckOptions) async throws
  /// `odr http`, its body read and its key found.
  func http(_ options: HTTPOptions) async throws
}

/// What `odr url check` was asked.
package struct URLCheckOptions: Sendable {
  package var strings: [String]
  package var policy: String
  package var json: Bool
}

/// What `odr http` was asked.
package struct HTTPOptions: Sendable {
  package var method: String
  package var url: String
  package var policy: String
  package var attempts: Int
  package var maxTime: Double
  package var include: Bool
  package var headers: [(name: String, value: String)] = []
  package var body: Data?
  package var key: APIKey?
}
