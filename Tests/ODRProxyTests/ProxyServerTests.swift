import Foundation
import ODRKeys
import ODRProxy
@testable import ODRProxyServer
import ODRTesting
import Testing

/// The proxy's bounds, in process: a child cannot make odr hold more than
/// the limits allow.
@Suite(.enabled(if: TestSelection.untagged)) struct ProxyServerTests {
  static func server(_ limits: ProxyServer.Limits) async throws -> (ProxyServer, ProxyCredentials) {
    let key = APIKey(name: "Weather", value: "w-secret", metadata: KeyMetadata(header: "X-Key", hosts: ["127.0.0.1"]))
    let credentials = ProxyCredentials()
    let server = try await ProxyServer.start(.loopback, bindings: [ProxyBinding(key: key)], credentials: credentials, bases: [],
                                             authority: try RunAuthority(hosts: [ProxyHost("127.0.0.1")!]), trustRoots: nil,
                                             log: ProxyAuditLog(descriptor: -1), limits: limits)
    return (server, credentials)
  }

  func curl(_ server: ProxyServer, _ credentials: ProxyCredentials, _ arguments: [String]) async throws -> String {
    let result = try await Command.run("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-x", "http://odr:\(credentials.token)@127.0.0.1:\(server.port)"] + arguments)
    return result.stdout
  }

  @Test func aBodyOverTheLimitIsRefusedAndHeadersOverItEndTheConnection() async throws {
    var limits = ProxyServer.Limits()
    limits.bodyBytes = 1024
    limits.headerBytes = 2048
    let (server, credentials) = try await Self.server(limits)
    defer { Task { await server.stop() } }
    #expect(try await curl(server, credentials, ["--data-binary", String(repeating: "x", count: 2000), "http://127.0.0.1:9/"]) == "413")
    let big = try await curl(server, credentials, ["-H", "X-Big: " + String(repeating: "y", count: 4000), "http://127.0.0.1:9/"])
    #expect(big == "400" || big == "000", "\(big)")
    // Within the limits the request is decided (port 9 refuses: 502).
    #expect(try await curl(server, credentials, ["--data-binary", "small", "http://127.0.0.1:9/"]) == "502")
  }

  @Test func connectionsOverTheLimitAreClosedOnAccept() async throws {
    var limits = ProxyServer.Limits()
    limits.unauthenticated = 2
    let (server, _) = try await Self.server(limits)
    defer { Task { await server.stop() } }
    var open: [Int32] = []
    defer { for fd in open { close(fd) } }
    for _ in 0..<3 {
      let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
      var address = sockaddr_in()
      address.sin_family = sa_family_t(AF_INET)
      address.sin_port = in_port_t(UInt16(server.port).bigEndian)
      address.sin_addr.s_addr = inet_addr("127.0.0.1")
      let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
      #expect(connected == 0)
      open.append(fd)
    }
    // One of them is closed by the proxy (which one: the order the event
    // loops set them up in): it reads end of file; waits at most 5 s.
    var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    var closed: [Int] = []
    for _ in 0..<50 where closed.isEmpty {
      _ = poll(&fds, nfds_t(fds.count), 100)
      closed = fds.indices.filter { fds[$0].revents != 0 }
    }
    #expect(closed.count == 1)
    var byte: UInt8 = 0
    #expect(closed.allSatisfy { read(open[$0], &byte, 1) == 0 })
    let kept = try #require(open.indices.first { !closed.contains($0) })
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    // The others stay open: a request on one is answered (407: no token).
    let request = Array("GET http://127.0.0.1:9/ HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n".utf8)
    _ = request.withUnsafeBytes { write(open[kept], $0.baseAddress, $0.count) }
    setsockopt(open[kept], SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var answer = [UInt8](repeating: 0, count: 64)
    let count = read(open[kept], &answer, answer.count)
    #expect(count > 0 && String(decoding: answer.prefix(max(count, 0)), as: UTF8.self).hasPrefix("HTTP/1.1 407"))
  }
}
