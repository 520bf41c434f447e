public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The socket work the test servers share: listening on 127.0.0.1, reading
/// one HTTP/1.1 request, writing bytes.
public enum LoopbackHTTP {
  /// A request as the server read it.
  public struct Request: Sendable {
    public let method: String
    /// The request target: path and query, as sent.
    public let target: String
    /// Header names lower-cased.
    public let headers: [String: String]
    public let body: Data
    /// When the server finished reading it.
    public let received: ContinuousClock.Instant

    /// The path without the query.
    public var path: String { String(target.split(separator: "?", maxSplits: 1).first ?? "/") }
    /// The raw query, if any.
    public var query: String? { target.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) }
  }

  /// A socket listening on 127.0.0.1 on a free port.
  static func listen() throws -> (fd: Int32, port: Int) {
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
    guard bound == 0, Glibc.listen(fd, 128) == 0 else { close(fd); throw TestFailure("cannot listen on 127.0.0.1") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
  }

  /// Accepts connections until the socket is closed, handing each to
  /// `serve` on its own thread (and closing it after).
  static func acceptLoop(_ listener: Int32, serve: @escaping @Sendable (Int32) -> Void) {
    Thread.detachNewThread {
      while true {
        let client = accept(listener, nil, nil)
        if client < 0 {
          if errno == EINTR { continue }
          return
        }
        Thread.detachNewThread {
          serve(client)
          close(client)
        }
      }
    }
  }

  /// Reads one request (headers and a Content-Length body), or nil when the
  /// connection closes first.
  static func readRequest(_ client: Int32) -> Request? {
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 4096)
    var headerEnd: Range<Data.Index>?
    while headerEnd == nil, data.count < 65_536 {
      let n = recv(client, &buffer, buffer.count, 0)
      if n <= 0 { return nil }
      data.append(contentsOf: buffer[0..<n])
      headerEnd = data.range(of: Data("\r\n\r\n".utf8))
    }
    guard let headerEnd else { return nil }
    let lines = String(decoding: data[..<headerEnd.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
    let requestLine = lines[0].split(separator: " ")
    guard requestLine.count >= 2 else { return nil }
    var headers: [String: String] = [:]
    for line in lines.dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    var body = Data(data[headerEnd.upperBound...])
    let length = Int(headers["content-length"] ?? "") ?? 0
    while body.count < length {
      let n = recv(client, &buffer, min(buffer.count, length - body.count), 0)
      if n <= 0 { return nil }
      body.append(contentsOf: buffer[0..<n])
    }
    return Request(method: String(requestLine[0]), target: String(requestLine[1]), headers: headers, body: body, received: .now)
  }

  /// Writes all of `data`; false when the peer is gone.
  static func sendAll(_ client: Int32, _ data: some DataProtocol) -> Bool {
    Data(data).withUnsafeBytes { bytes in
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
