public import Foundation

/// An HTTP/1.1 server on 127.0.0.1 whose answers a test scripts with a
/// handler, and which records every request it gets. Keeps connections
/// alive, a thread per connection.
///
/// It answers on both `http://127.0.0.1:PORT` and `http://localhost:PORT`:
/// two host names for one server, which is how tests tell a same-host
/// request from a cross-host one.
public final class HTTPTestServer: @unchecked Sendable {
  /// What the handler answers.
  public struct Reply: Sendable {
    public var status: Int
    public var headers: [String: String]
    public var body: Data
    /// Wait this long before answering (a slow server).
    public var delay: Duration?
    /// Close the connection without answering (a dropped connection).
    public var drop: Bool

    public init(status: Int = 200, headers: [String: String] = [:], body: Data = Data(), delay: Duration? = nil, drop: Bool = false) {
      self.status = status
      self.headers = headers
      self.body = body
      self.delay = delay
      self.drop = drop
    }

    /// A 200 with `text` as the body.
    public static func text(_ text: String, status: Int = 200) -> Reply { Reply(status: status, body: Data(text.utf8)) }
  }

  public let port: Int
  private let listener: Int32
  private let lock = NSLock()
  private var recorded: [LoopbackHTTP.Request] = []
  private var stopped = false
  private let handler: @Sendable (LoopbackHTTP.Request) -> Reply

  /// Starts a server answering with `handler`.
  public init(_ handler: @escaping @Sendable (LoopbackHTTP.Request) -> Reply) throws {
    self.handler = handler
    (listener, port) = try LoopbackHTTP.listen()
    LoopbackHTTP.acceptLoop(listener) { [self] client in serve(client) }
  }

  deinit { stop() }

  /// `http://127.0.0.1:PORT` (no trailing slash).
  public var url: String { "http://127.0.0.1:\(port)" }
  /// The same server under another host name: `http://localhost:PORT`.
  public var otherHostURL: String { "http://localhost:\(port)" }

  /// Every request so far, in order.
  public var requests: [LoopbackHTTP.Request] { lock.withLock { recorded } }

  /// Stops accepting connections (once: a second close could hit a
  /// descriptor another test has since opened).
  public func stop() {
    let wasRunning = lock.withLock { () -> Bool in
      defer { stopped = true }
      return !stopped
    }
    guard wasRunning else { return }
    shutdown(listener, Int32(SHUT_RDWR))
    close(listener)
  }

  private func serve(_ client: Int32) {
    while let request = LoopbackHTTP.readRequest(client) {
      lock.withLock { recorded.append(request) }
      let reply = handler(request)
      if let delay = reply.delay {
        Thread.sleep(forTimeInterval: Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18)
      }
      if reply.drop { return }
      var head = "HTTP/1.1 \(reply.status) Status\r\nContent-Length: \(reply.body.count)\r\n"
      for (name, value) in reply.headers { head += "\(name): \(value)\r\n" }
      head += "\r\n"
      guard LoopbackHTTP.sendAll(client, Data(head.utf8) + reply.body) else { return }
      if request.headers["connection"]?.lowercased() == "close" { return }
    }
  }
}
