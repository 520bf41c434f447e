public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A static HTTP/1.1 file server on 127.0.0.1 for download tests, able to
/// inject faults and counting the requests for each path.
///
/// One request per connection (`Connection: close`); a thread per
/// connection. Bodies are streamed from the files below `root`.
public final class FixtureServer: @unchecked Sendable {
  /// What goes wrong when a path is served.
  public enum Fault: Sendable, Equatable {
    /// Answer with this status and a short body instead of the file.
    case status(Int)
    /// Send the headers and this many body bytes, then drop the connection.
    case dropAfter(Int)
    /// Announce and send only this many bytes: a complete but short body.
    case truncate(Int)
    /// Flip one bit of the byte at this offset.
    case flipByte(Int)
    /// Send the body in chunks of this size with this pause between them.
    case slow(chunk: Int, pause: Duration)
    /// Wait this long before answering: a server far away (round trips, a CDN miss).
    case latency(Duration)
  }

  /// The port the server listens on.
  public let port: Int
  /// `http://127.0.0.1:<port>/`
  public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/")! }
  private let root: URL
  private let listener: Int32
  private let lock = NSLock()
  private var faults: [String: Fault] = [:]
  private var counts: [String: Int] = [:]
  private var order: [String] = []
  private var inFlight = 0
  private var peak = 0
  private var stopped = false

  /// Starts serving the files below `root`.
  public init(root: URL) throws {
    self.root = root
    (listener, port) = try LoopbackHTTP.listen()
    LoopbackHTTP.acceptLoop(listener) { [self] client in serve(client) }
  }

  deinit { stop() }

  /// Stops accepting connections.
  public func stop() {
    let wasRunning = lock.withLock { () -> Bool in
      defer { stopped = true }
      return !stopped
    }
    if wasRunning {
      shutdown(listener, Int32(SHUT_RDWR))
      close(listener)
    }
  }

  /// Sets (or with nil clears) the fault for requests whose path ends with `suffix`.
  public func setFault(_ fault: Fault?, forPathEndingWith suffix: String) {
    lock.withLock { faults[suffix] = fault }
  }

  /// How many requests asked for a path ending with `suffix`.
  public func requests(forPathEndingWith suffix: String) -> Int {
    lock.withLock { counts.filter { $0.key.hasSuffix(suffix) }.values.reduce(0, +) }
  }

  /// The paths requested, in the order the requests arrived.
  public var requestOrder: [String] { lock.withLock { order } }

  /// The most requests that were being answered at once.
  public var maxConcurrentRequests: Int { lock.withLock { peak } }

  /// How many requests were served in all.
  public var totalRequests: Int { lock.withLock { counts.values.reduce(0, +) } }

  private func serve(_ client: Int32) {
    guard let request = LoopbackHTTP.readRequest(client), request.method == "GET" || request.method == "HEAD" else { return }
    let path = request.path
    let fault = lock.withLock { () -> Fault? in
      counts[path, default: 0] += 1
      order.append(path)
      inFlight += 1
      peak = max(peak, inFlight)
      return faults.first { path.hasSuffix($0.key) }?.value
    }
    defer { lock.withLock { inFlight -= 1 } }
    if case .status(let code) = fault {
      return respond(client, status: code, body: Data("fault \(code)\n".utf8))
    }
    let relative = path.removingPercentEncoding ?? path
    let file = root.appending(path: String(relative.drop { $0 == "/" }))
    guard !relative.contains(".."), let data = try? Data(contentsOf: file, options: .mappedIfSafe) else {
      return respond(client, status: 404, body: Data("not found\n".utf8))
    }
    var body = data
    var announced = data.count
    var dropAfter: Int?
    var chunk = 256 * 1024
    var pause: Duration?
    switch fault {
    case .dropAfter(let bytes): dropAfter = bytes
    case .truncate(let bytes): announced = min(bytes, data.count); body = data.prefix(announced)
    case .flipByte(let offset): if offset < body.count { body[offset] ^= 0x01 }
    case .slow(let size, let wait): chunk = size; pause = wait
    case .latency(let wait): Thread.sleep(forTimeInterval: Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18)
    default: break
    }
    var head = "HTTP/1.1 200 OK\r\nContent-Length: \(announced)\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n"
    guard LoopbackHTTP.sendAll(client, Data(head.utf8)) else { return }
    head = ""
    var offset = 0
    while offset < body.count {
      var end = min(offset + chunk, body.count)
      if let limit = dropAfter {
        guard offset < limit else { return }  // drop: close with the body incomplete
        end = min(end, limit)
      }
      guard LoopbackHTTP.sendAll(client, body[offset..<end]) else { return }
      offset = end
      if let pause, offset < body.count { Thread.sleep(forTimeInterval: Double(pause.components.seconds) + Double(pause.components.attoseconds) / 1e18) }
    }
  }

  private func respond(_ client: Int32, status: Int, body: Data) {
    let head = "HTTP/1.1 \(status) Fault\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
    _ = LoopbackHTTP.sendAll(client, Data(head.utf8) + body)
  }
}
