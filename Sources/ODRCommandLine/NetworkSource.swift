import FoundationEssentials
import ODRHTTP
import ODRResources

/// One http(s) or s3 location as `odr` reaches it: AsyncHTTPClient in this
/// process (no Foundation networking), with odr.json's S3 endpoint and
/// catalog token.
struct NetworkSource: Sendable {
  /// The location (http, https or s3).
  var url: URL
  /// Seconds a transfer may stall.
  var stall: Double
  /// odr.json's S3 endpoint, if any.
  var endpoint: String?
  /// A header for the location's origin (odr.json "auth"), if any.
  var credential: Credential?

  /// A header and its secret value, and what it is by name.
  struct Credential: Sendable {
    var header: String
    var value: String
    var name: String
  }

  init(url: URL, stall: Double, endpoint: String?) {
    self.url = url
    self.stall = stall
    self.endpoint = endpoint
  }

  private var timeouts: HTTPTransport.Timeouts { HTTPTransport.Timeouts(stall: .milliseconds(Int(stall * 1000))) }

  /// The transport that downloads from this location.
  func transport() throws -> any BlobTransport {
    let credential = credential.map { HTTPCredential(header: $0.header, value: $0.value, origin: url, name: $0.name) }
    let s3 = url.scheme == "s3" ? try S3Access.fromEnvironment(ProcessInfo.processInfo.environment, endpoint: endpoint) : nil
    return HTTPTransport(timeouts: timeouts, credential: credential, s3: s3)
  }

  /// Where `odr publish` uploads to this s3:// location.
  func publishDestination() throws -> any PublishDestination {
    S3Destination(url, access: try S3Access.fromEnvironment(ProcessInfo.processInfo.environment, endpoint: endpoint), timeouts: timeouts)
  }
}
