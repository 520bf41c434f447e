package import FoundationEssentials
package import ODRKeys
package import ODRResources
package import ODRURL

/// What only `odr-net` can do, because it links the HTTP stacks
/// (AsyncHTTPClient for downloads, URLSession for `odr http`): the lean `odr`
/// has none and hands such commands over (``NetworkHandoff``).
package protocol NetworkCommands: Sendable {
  /// The transport for one http(s) or s3 catalog location.
  func transport(for source: NetworkSource) throws -> any BlobTransport
  /// Where `odr publish` uploads to an s3:// destination.
  func publishDestination(for source: NetworkSource) throws -> any PublishDestination
  /// `odr http`, its body read and its key found.
  func http(_ options: HTTPOptions) async throws
}

/// What the network context needs to reach one catalog location.
package struct NetworkSource: Sendable {
  /// The location (http, https or s3).
  package var url: URL
  /// Seconds a transfer may stall.
  package var stall: Double
  /// odr.json's S3 endpoint, if any.
  package var endpoint: String?
  /// A header for the location's origin (odr.json "auth"), if any.
  package var credential: Credential?

  /// A header and its secret value, and what it is by name.
  package struct Credential: Sendable {
    package var header: String
    package var value: String
    package var name: String
  }

  init(url: URL, stall: Double, endpoint: String?) {
    self.url = url
    self.stall = stall
    self.endpoint = endpoint
  }
}

/// What `odr http` was asked.
package struct HTTPOptions: Sendable {
  package var method: String
  package var url: String
  package var policy: URLPolicy
  package var attempts: Int
  package var maxTime: Double
  package var include: Bool
  package var headers: [(name: String, value: String)] = []
  package var body: Data?
  package var key: APIKey?
  /// -o: where the body goes (nil: stdout).
  package var output: String?
  package var verbose = false
  package var silent = false
  package var failWithBody = false
  package var userAgent = ""
}
