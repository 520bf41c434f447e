import Foundation
import NIOHTTP1
import ODRKeyFormat
import ODRProxy
@testable import ODRProxyServer
import ODRTesting
import Testing

/// The proxy's bounds, in process: neither the command nor another local
/// user can make odr hold more than the limits allow, and an answer on its
/// way is never cut.
@Suite(.enabled(if: TestSelection.untagged)) struct ProxyServerTests {
  /// A proxy for one key bound to `127.0.0.1:port` (plain http to a named loopback port).
  static func server(_ limits: ProxyServer.Limits, port: Int = 9, log: ProxyAuditLog = ProxyAuditLog(descriptor: -1)) async throws
    -> (ProxyServer, ProxyCredentials, ProxyBinding) {
    let binding = ProxyBinding(key: APIKey(name: "Weather", value: "w-secret", metadata: KeyMetadata(header: "X-Key", hosts: ["127.0.0.1:\(port)"])))
    let credentials = ProxyCredentials()
    let server = try await ProxyServer.start(.loopback, bindings: [binding], credentials: credentials, bases: [],
                                             authority: try RunAuthority(hosts: [ProxyHost("127.0.0.1")!]), trustRoots: nil,
                                             log: log, limits: limits)
    return (server, credentials, binding)
  }

  func curl(_ server: ProxyServer, _ credentials: ProxyCredentials, _ arguments: [String]) async throws -> String {
    let result = try await Command.run("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-x", "http://odr:\(credentials.token)@127.0.0.1:\(server.port)"] + arguments)
    return result.stdout
  }

  /// A TCP connection to the proxy (a raw descriptor).
  static func connect(_ port: Int) -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    return connected == 0 ? fd : -1
  }

  /// Which of `fds` the proxy has closed within `seconds` (they read end
  /// of file; what comes before it is read and dropped): returns early
  /// once all are.
  static func closed(_ fds: [Int32], within seconds: Double) -> [Int] {
    var polled = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    var closed: Set<Int> = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    let deadline = Date().addingTimeInterval(seconds)
    while closed.count < fds.count && Date() < deadline {
      _ = poll(&polled, nfds_t(polled.count), 20)
      for index in polled.indices where polled[index].revents != 0 && !closed.contains(index) {
        if read(fds[index], &buffer, buffer.count) <= 0 { closed.insert(index) }
      }
    }
    return closed.sorted()
  }

  /// What `fd` answers to `request`, read for at most 5 s.
  static func exchange(_ fd: Int32, _ request: String) -> String {
    _ = Array(request.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var answer = [UInt8](repeating: 0, count: 1024)
    let count = read(fd, &answer, answer.count)
    return String(decoding: answer.prefix(max(count, 0)), as: UTF8.self)
  }

  @Test func aBodyOverTheLimitIsRefusedAndHeadersOverItEndTheConnection() async throws {
    var limits = ProxyServer.Limits()
    limits.bodyBytes = 1024
    limits.headerBytes = 2048
    let (server, credentials, _) = try await Self.server(limits)
    defer { Task { await server.stop() } }
    #expect(try await curl(server, credentials, ["--data-binary", String(repeating: "x", count: 2000), "http://127.0.0.1:9/"]) == "413")
    let big = try await curl(server, credentials, ["-H", "X-Big: " + String(repeating: "y", count: 4000), "http://127.0.0.1:9/"])
    #expect(big == "400" || big == "000", "\(big)")
    // Within the limits the request is decided (port 9 refuses: 502).
    #expect(try await curl(server, credentials, ["--data-binary", "small", "http://127.0.0.1:9/"]) == "502")
  }

  /// Connections that have not shown the token have a limit of their own
  /// (more are closed on accept) and a deadline; one that shows it is
  /// counted apart and served.
  @Test func connectionsWithoutTheTokenAreLimitedApartAndClosedAtTheirDeadline() async throws {
    var limits = ProxyServer.Limits()
    limits.unauthenticated = 2
    limits.authentication = .milliseconds(300)
    let (server, credentials, _) = try await Self.server(limits)
    defer { Task { await server.stop() } }
    let idle = (0..<3).map { _ in Self.connect(server.port) }
    defer { for fd in idle { close(fd) } }
    #expect(idle.allSatisfy { $0 >= 0 })
    // One over the limit is closed at once; the other two at their deadline.
    let first = Self.closed(idle, within: 0.25)
    #expect(first.count == 1, "\(first)")
    #expect(Set(Self.closed(idle, within: 2)).union(first).count == 3)
    // The run's own client, with the token, is not shut out meanwhile.
    let served = Self.connect(server.port)
    defer { close(served) }
    let token = Data("odr:\(credentials.token)".utf8).base64EncodedString()
    #expect(Self.exchange(served, "GET http://127.0.0.1:9/ HTTP/1.1\r\nHost: 127.0.0.1:9\r\nProxy-Authorization: Basic \(token)\r\n\r\n").hasPrefix("HTTP/1.1 502"))
  }

  /// A request without the token is answered at its head: its body (here
  /// announced at 1 GiB, never sent) is not waited for or read.
  @Test func aRequestWithoutTheTokenIsRefusedBeforeItsBody() async throws {
    let (server, _, _) = try await Self.server(ProxyServer.Limits())
    defer { Task { await server.stop() } }
    let fd = Self.connect(server.port)
    defer { close(fd) }
    let answer = Self.exchange(fd, "POST http://127.0.0.1:9/ HTTP/1.1\r\nHost: 127.0.0.1:9\r\nContent-Length: 1073741824\r\n\r\n")
    #expect(answer.hasPrefix("HTTP/1.1 407") && answer.contains("Connection: close"), "\(answer)")
    #expect(Self.closed([fd], within: 2) == [0])
  }

  /// Idle is neither side moving: a connection with nothing on its way is
  /// closed at the limit; an answer that takes longer than the limit to
  /// start, and one that streams for longer than it, arrive whole.
  @Test func anAnswerOnItsWayIsNeverCutAnIdleConnectionIs() async throws {
    let body = Data((0..<6).map { _ in UInt8(ascii: "s") })
    try await TestHTTPServer.answering({ request in
      TestHTTPServer.Reply(body: request.path == "/late" ? Data("late w-secret".utf8) : body)
    }) { upstream in
      upstream.setFault(.latency(.milliseconds(900)), forPathEndingWith: "/late")
      upstream.setFault(.slow(chunk: 1, pause: .milliseconds(200)), forPathEndingWith: "/stream")
      var limits = ProxyServer.Limits()
      limits.idle = .milliseconds(400)
      let (server, credentials, binding) = try await Self.server(limits, port: upstream.port)
      defer { Task { await server.stop() } }
      let proxy = ["-x", "http://odr:\(credentials.token)@127.0.0.1:\(server.port)"]
      let late = try await Command.run("/usr/bin/curl", ["-sS"] + proxy + ["\(upstream.url)/late", "-H", "X-Key: \(binding.placeholder.text)"])
      #expect(late.stdout == "late \(binding.placeholder.text)", "\(late.stdout)\(late.stderr)")
      let stream = try await Command.run("/usr/bin/curl", ["-sS"] + proxy + ["\(upstream.url)/stream"])
      #expect(stream.stdout == String(decoding: body, as: UTF8.self) && stream.duration > .milliseconds(800), "\(stream.stdout)\(stream.stderr)")
      let fd = Self.connect(server.port)
      defer { close(fd) }
      let token = Data("odr:\(credentials.token)".utf8).base64EncodedString()
      #expect(Self.exchange(fd, "GET \(upstream.url)/stream HTTP/1.1\r\nHost: 127.0.0.1:\(upstream.port)\r\nProxy-Authorization: Basic \(token)\r\n\r\n").hasPrefix("HTTP/1.1 200"))
      // Kept alive after its answer, then idle: closed.
      #expect(Self.closed([fd], within: 3) == [0])
    }
  }

  /// The audit log to a reader that does not read (a paused pager on
  /// odr's stderr), through a descriptor made non-blocking: requests are
  /// still answered, and every line arrives once the reader reads again.
  @Test(.timeLimit(.minutes(1))) func aLogReaderThatDoesNotReadHoldsNothingUp() async throws {
    var ends: [Int32] = [0, 0]
    try #require(pipe(&ends) == 0)
    defer { close(ends[0]); close(ends[1]) }
    _ = fcntl(ends[1], 1031, 4096)  // F_SETPIPE_SZ (not in Glibc's Swift overlay): a small pipe, full sooner
    // Non-blocking, as a command that shares odr's stderr can make it: a
    // full pipe is waited for, not a reason to drop lines.
    _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
    try await TestHTTPServer.answering({ _ in TestHTTPServer.Reply(body: Data("ok".utf8)) }) { upstream in
      let log = ProxyAuditLog(descriptor: ends[1])
      let (server, credentials, binding) = try await Self.server(ProxyServer.Limits(), port: upstream.port, log: log)
      defer { Task { await server.stop() } }
      let fd = Self.connect(server.port)
      defer { close(fd) }
      let token = Data("odr:\(credentials.token)".utf8).base64EncodedString()
      let count = 100
      for index in 0..<count {
        let answer = Self.exchange(fd, "GET \(upstream.url)/\(index) HTTP/1.1\r\nHost: 127.0.0.1:\(upstream.port)\r\n"
                                      + "Proxy-Authorization: Basic \(token)\r\nX-Key: \(binding.placeholder.text)\r\n\r\n")
        try #require(answer.hasPrefix("HTTP/1.1 200"), "request \(index): \(answer)")
      }
      // Now read: every line comes, none dropped.
      var text = Data()
      var buffer = [UInt8](repeating: 0, count: 65_536)
      var polled = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
      let deadline = Date().addingTimeInterval(5)
      while text.count(where: { $0 == 0x0a }) < count && Date() < deadline {
        guard poll(&polled, 1, 100) > 0 else { continue }
        let read = Glibc.read(ends[0], &buffer, buffer.count)
        if read > 0 { text.append(contentsOf: buffer.prefix(read)) }
      }
      let lines = String(decoding: text, as: UTF8.self).split(separator: "\n")
      #expect(lines.count == count && lines.allSatisfy { $0.contains(#""keys":["Weather"]"#) }, "\(lines.count) lines")
    }
  }

  /// Every content or transfer coding other than identity (and chunked
  /// framing) is found, in every occurrence of the header.
  @Test(arguments: [
    ([("Content-Encoding", "gzip")], "gzip"), ([("Content-Encoding", "identity"), ("Content-Encoding", "br")], "br"),
    ([("Content-Encoding", "identity, zstd")], "zstd"), ([("Transfer-Encoding", "gzip, chunked")], "gzip"),
    ([("Transfer-Encoding", "chunked")], nil), ([("Content-Encoding", "identity")], nil), ([], nil),
  ] as [([(String, String)], String?)])
  func anEncodedAnswerIsFound(_ headers: [(String, String)], _ coding: String?) {
    #expect(UpstreamAnswer.coding(HTTPHeaders(headers)) == coding)
  }
}

/// What only root shows: the audit log given a device (`--proxy-log
/// /dev/null`) leaves its mode alone. A device of the test's own, not
/// /dev/null: a failure must not break the machine.
@Suite(.enabled(if: TestSelection.root)) struct ProxyAuditLogAsRootTests {
  @Test func aDeviceKeepsItsMode() throws {
    let folder = FileManager.default.temporaryDirectory.appending(path: "odr-null-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }  // best effort: the test is over
    let device = folder.appending(path: "null").path
    #expect(mknod(device, S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0, "mknod: \(String(cString: strerror(errno)))")  // 1:3, the null device
    chmod(device, 0o666)
    func mode(_ path: String) throws -> Int? { try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int }
    try ProxyAuditLog(path: device).flush()
    #expect(try mode(device) == 0o666)
    let file = folder.appending(path: "audit.jsonl").path
    _ = try ProxyAuditLog(path: file)
    #expect(try mode(file) == 0o600)
  }
}

