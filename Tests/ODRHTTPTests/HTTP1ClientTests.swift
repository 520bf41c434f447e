import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOHTTP1
@testable import ODRHTTP
import ODRTesting
import Testing

/// odr's HTTP client at its own level, against the test server: kept
/// connections, the one retry, the stall limit, cancelling. (Downloads,
/// S3 and the proxy test it through their own suites.)
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(1))) struct HTTP1ClientTests {
  func get(_ path: String, from server: TestHTTPServer, with client: HTTP1Client) async throws -> (status: Int, body: String) {
    let response = try await client.execute(HTTP1Request(method: .GET, scheme: "http", host: "127.0.0.1", port: server.port, target: path))
    let body = try await response.body.collect(upTo: 1 << 20)
    return (Int(response.status.code), String(buffer: body))
  }

  @Test func keptConnectionsCarryTheNextRequests() async throws {
    let client = HTTP1Client()
    defer { Task { await client.shutdown() } }
    try await TestHTTPServer.answering({ .text("answer to \($0.path) #\($0.onConnection)") }) { server in
      for index in 0..<3 {
        let answer = try await get("/r\(index)", from: server, with: client)
        #expect(answer.status == 200 && answer.body == "answer to /r\(index) #\(index)")
      }
      #expect(server.acceptedConnections == 1)
    }
  }

  @Test func aKeptConnectionUnusedForTheIdleLimitIsClosed() async throws {
    let client = HTTP1Client(configuration: .init(idle: .milliseconds(50)))
    defer { Task { await client.shutdown() } }
    try await TestHTTPServer.answering({ _ in .text("ok") }) { server in
      _ = try await get("/a", from: server, with: client)
      let deadline = ContinuousClock.now + .seconds(5)
      while server.openConnections > 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
      #expect(server.openConnections == 0)
      let next = try await get("/b", from: server, with: client)
      #expect(next.body == "ok" && server.acceptedConnections == 2)
    }
  }

  /// Answers a connection's first request and drops the connection at its
  /// second: a server whose idle limit met the request.
  static let dropsKeptConnections: @Sendable (TestHTTPServer.Request) -> TestHTTPServer.Reply = { request in
    request.onConnection > 0 ? TestHTTPServer.Reply(drop: true) : .text("fresh \(request.path)")
  }

  /// A server that closes a kept connection as the next request arrives
  /// (its idle limit met the request): the request goes again, once, on a
  /// new connection, and the caller sees only its answer.
  @Test func aRequestOnAKeptConnectionTheServerDroppedIsSentAgain() async throws {
    let client = HTTP1Client()
    defer { Task { await client.shutdown() } }
    try await TestHTTPServer.answering(Self.dropsKeptConnections) { server in
      let first = try await get("/a", from: server, with: client), second = try await get("/b", from: server, with: client)
      #expect(first.body == "fresh /a" && second.body == "fresh /b")
      #expect(server.acceptedConnections == 2)
      #expect(server.requestOrder == ["/a", "/b", "/b"])
    }
  }

  @Test func aPostIsNotSentTwice() async throws {
    let client = HTTP1Client()
    defer { Task { await client.shutdown() } }
    try await TestHTTPServer.answering(Self.dropsKeptConnections) { server in
      let first = try await get("/a", from: server, with: client)
      #expect(first.body == "fresh /a")
      let post = HTTP1Request(method: .POST, scheme: "http", host: "127.0.0.1", port: server.port, target: "/b", body: .bytes(ByteBuffer(string: "x")))
      await #expect(throws: HTTP1Client.Failure.closedEarly) { try await client.execute(post) }
      #expect(server.requestOrder == ["/a", "/b"])
    }
  }

  /// A listener whose backlog is full drops the handshake's SYN: the
  /// connection never completes, and the connect limit says so.
  @Test func aConnectionThatNeverCompletesFailsWithinTheConnectLimit() async throws {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(listener) }
    var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    try withUnsafeMutablePointer(to: &address) { pointer in
      try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
        try #require(bind(listener, raw, length) == 0 && listen(listener, 0) == 0 && getsockname(listener, raw, &length) == 0)
      }
    }
    let port = Int(UInt16(bigEndian: address.sin_port))
    // Fill the backlog with connections nobody accepts.
    let fillers = (0..<3).map { _ in socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0) }
    defer { fillers.forEach { close($0) } }
    for filler in fillers {
      _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, length) } }
    }
    let client = HTTP1Client(configuration: .init(connect: .milliseconds(200)))
    defer { Task { await client.shutdown() } }
    let request = HTTP1Request(method: .GET, scheme: "http", host: "127.0.0.1", port: port, target: "/")
    await #expect(throws: HTTP1Client.Failure.connectTimeout) { try await client.execute(request) }
  }

  @Test func cancellingARequestClosesItsConnection() async throws {
    let client = HTTP1Client()
    defer { Task { await client.shutdown() } }
    try await TestHTTPServer.answering({ _ in .text(String(repeating: "x", count: 1000)) }) { server in
      server.setFault(.slow(chunk: 10, pause: .milliseconds(200)), forPathEndingWith: "/slow")
      let task = Task { try await get("/slow", from: server, with: client) }
      while server.totalRequests == 0 { await Task.yield() }
      task.cancel()
      await #expect(throws: (any Error).self) { try await task.value }
      // the next request needs a connection of its own
      let next = try await get("/next", from: server, with: client)
      #expect(next.status == 200)
      #expect(server.acceptedConnections == 2)
    }
  }

  /// A file body is exactly the length its head announced: more on disk
  /// is not sent, less fails the upload.
  @Test func aFileBodyIsTheLengthAnnounced() async throws {
    let file = FileManager.default.temporaryDirectory.appending(path: "odr-chunks-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: file) }
    try Data(repeating: 1, count: 600_000).write(to: file)
    var sent = 0
    try await FileChunks.send(file.path, length: 300_000) { sent += $0.readableBytes }
    #expect(sent == 300_000)
    await #expect(throws: (any Error).self) { try await FileChunks.send(file.path, length: 700_000) { _ in } }
  }
}

/// The client's limits against time, in the phase that runs alone (no
/// other test loading the cores): a 20 ms stall limit means 20 ms.
@Suite(.tags(.timed), .enabled(if: TestSelection.timed), .timeLimit(.minutes(1))) struct HTTP1ClientLimitTests {
  /// The idle limit counts from a connection's last use: a connection
  /// used again before an earlier keep's limit is not closed at it.
  @Test func theIdleLimitCountsFromTheLastUse() async throws {
    let client = HTTP1Client(configuration: .init(idle: .milliseconds(400)))
    defer { Task { await client.shutdown() } }
    try await TestHTTPServer.answering({ _ in .text("ok") }) { server in
      let start = ContinuousClock.now
      _ = try await HTTP1ClientTests().get("/a", from: server, with: client)      // kept at ~0 ms: its limit falls at ~400 ms
      try await Task.sleep(until: start + .milliseconds(250))
      _ = try await HTTP1ClientTests().get("/b", from: server, with: client)      // used again, kept at ~250 ms
      try await Task.sleep(until: start + .milliseconds(550))                     // past the first limit, before the second (~650 ms)
      _ = try await HTTP1ClientTests().get("/c", from: server, with: client)
      #expect(server.acceptedConnections == 1, "the connection kept at 250 ms was closed at the 400 ms limit of its earlier keep")
    }
  }

  @Test func anAnswerThatStallsFailsWithinTheLimit() async throws {
    let client = HTTP1Client(configuration: .init(stall: .milliseconds(200)))
    defer { Task { await client.shutdown() } }
    try await TestHTTPServer.answering({ _ in .text(String(repeating: "x", count: 100)) }) { server in
      server.setFault(.slow(chunk: 10, pause: .seconds(5)), forPathEndingWith: "/slow")
      let start = ContinuousClock.now
      await #expect(throws: HTTP1Client.Failure.stalled) { try await HTTP1ClientTests().get("/slow", from: server, with: client) }
      #expect(ContinuousClock.now - start < .seconds(3))
    }
  }

  /// The stall limit counts from the end of the request: an upload that
  /// takes longer than it is not a stall.
  @Test func anUploadLongerThanTheStallLimitIsNotAStall() async throws {
    let client = HTTP1Client(configuration: .init(stall: .milliseconds(20)))
    defer { Task { await client.shutdown() } }
    let file = FileManager.default.temporaryDirectory.appending(path: "odr-upload-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: file) }
    try Data(repeating: 7, count: 48 << 20).write(to: file)
    try await TestHTTPServer.answering({ .text("got \($0.body.count)") }) { server in
      let put = HTTP1Request(method: .PUT, scheme: "http", host: "127.0.0.1", port: server.port, target: "/up",
                             body: .file(path: file.path, length: 48 << 20))
      let response = try await client.execute(put)
      let body = try await response.body.collect(upTo: 1024)
      #expect(String(buffer: body) == "got \(48 << 20)")
    }
  }
}
