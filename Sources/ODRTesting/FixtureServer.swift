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
  private var stopped = false

  /// Starts serving the files below `root`.
  public init(root: URL) throws {
    self.root = root
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestFailure("socket() failed") }
    var one: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0, listen(fd, 64) == 0 else { close(fd); throw TestFailure("cannot listen on 127.0.0.1") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    listener = fd
    port = Int(UInt16(bigEndian: address.sin_port))
    Thread.detachNewThread { [self] in acceptLoop() }
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

  /// How many requests were served in all.
  public var totalRequests: Int { lock.withLock { counts.values.reduce(0, +) } }

  private func acceptLoop() {
    while true {
      let client = accept(listener, nil, nil)
      if client < 0 {
        if errno == EINTR { continue }
        return
      }
      Thread.detachNewThread { [self] in
        serve(client)
        close(client)
      }
    }
  }

  private func serve(_ client: Int32) {
    guard let path = readRequestPath(client) else { return }
    let fault = lock.withLock { () -> Fault? in
      counts[path, default: 0] += 1
      return faults.first { path.hasSuffix($0.key) }?.value
    }
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
    default: break
    }
    var head = "HTTP/1.1 200 OK\r\nContent-Length: \(announced)\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n"
    guard sendAll(client, Data(head.utf8)) else { return }
    head = ""
    var offset = 0
    while offset < body.count {
      var end = min(offset + chunk, body.count)
      if let limit = dropAfter {
        guard offset < limit else { return }  // drop: close with the body incomplete
        end = min(end, limit)
      }
      guard sendAll(client, body[offset..<end]) else { return }
      offset = end
      if let pause { Thread.sleep(forTimeInterval: Double(pause.components.seconds) + Double(pause.components.attoseconds) / 1e18) }
    }
  }

  private func respond(_ client: Int32, status: Int, body: Data) {
    let head = "HTTP/1.1 \(status) Fault\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
    _ = sendAll(client, Data(head.utf8) + body)
  }

  /// The path of a `GET` request line; the rest of the headers is read and ignored.
  private func readRequestPath(_ client: Int32) -> String? {
    var request = Data()
    var buffer = [UInt8](repeating: 0, count: 4096)
    while request.range(of: Data("\r\n\r\n".utf8)) == nil, request.count < 65_536 {
      let n = recv(client, &buffer, buffer.count, 0)
      if n <= 0 { return nil }
      request.append(contentsOf: buffer[0..<n])
    }
    let line = String(decoding: request.prefix { $0 != UInt8(ascii: "\r") }, as: UTF8.self).split(separator: " ")
    guard line.count >= 2, line[0] == "GET" || line[0] == "HEAD" else { return nil }
    return String(line[1].split(separator: "?").first ?? "/")
  }

  private func sendAll(_ client: Int32, _ data: Data) -> Bool {
    data.withUnsafeBytes { bytes in
      var offset = 0
      while offset < bytes.count {
        let n = send(client, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return false }
        offset += n
      }
      return true
    }
  }
}
