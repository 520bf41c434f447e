public import NIOCore
public import NIOHTTP1

/// One request of ``HTTP1Client``: where it goes, what it says, its body.
public struct HTTP1Request: Sendable {
  /// What a request sends after its head.
  public enum Body: Sendable {
    /// Bytes in memory.
    case bytes(ByteBuffer)
    /// A file streamed from disk, `length` bytes, a few buffers in memory.
    case file(path: String, length: Int64)

    var length: Int64 {
      switch self {
      case .bytes(let buffer): Int64(buffer.readableBytes)
      case .file(_, let length): length
      }
    }
  }

  public var method: HTTPMethod
  /// `http` or `https`.
  public var scheme: String
  /// A name or an IP address (IPv6 without brackets).
  public var host: String
  public var port: Int
  /// The path and query, as sent (`/a/b?c=d`).
  public var target: String
  /// Sent as given; `Host` and `Content-Length` are added when missing.
  public var headers: HTTPHeaders
  public var body: Body?

  public init(method: HTTPMethod, scheme: String, host: String, port: Int, target: String, headers: HTTPHeaders = [:], body: Body? = nil) {
    self.method = method
    self.scheme = scheme
    self.host = host
    self.port = port
    self.target = target.isEmpty ? "/" : target
    self.headers = headers
    self.body = body
  }

  /// The head as sent: `Host` added when absent, the body's length said.
  var head: HTTPRequestHead {
    var headers = headers
    if !headers.contains(name: "host") {
      let name = host.contains(":") ? "[\(host)]" : host
      headers.add(name: "Host", value: port == (scheme == "https" ? 443 : 80) ? name : "\(name):\(port)")
    }
    if let body {
      headers.replaceOrAdd(name: "Content-Length", value: String(body.length))
    } else if [.POST, .PUT, .PATCH].contains(method), !headers.contains(name: "content-length") {
      headers.add(name: "Content-Length", value: "0")
    }
    return HTTPRequestHead(version: .http1_1, method: method, uri: target, headers: headers)
  }
}
