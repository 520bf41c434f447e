import Foundation
import ODRTesting
import Testing

/// The fault-injecting test server, checked with curl as the client.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct TestHTTPServerTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-fixture-\(UUID().uuidString)")
  let payload = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })

  func withSUT(_ test: (TestHTTPServer) async throws -> Void) async throws {
    try FileManager.default.createDirectory(at: root.appending(path: "blobs"), withIntermediateDirectories: true)
    try payload.write(to: root.appending(path: "blobs/file.bin"))
    try await TestHTTPServer.serving(files: root, test)
  }

  func curl(_ server: TestHTTPServer, _ path: String) async throws -> (status: Int32, body: Data) {
    let out = root.appending(path: "out-\(UUID().uuidString)")
    let result = try await Command.run("/usr/bin/curl", ["-sS", "-o", out.path, "--fail", server.baseURL.appending(path: path).absoluteString])
    return (result.status, (try? Data(contentsOf: out)) ?? Data())
  }

  @Test func servesFilesAndCountsRequests() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await withSUT { server in
      let (status, body) = try await curl(server, "blobs/file.bin")
      #expect(status == 0)
      #expect(body == payload)
      _ = try await curl(server, "blobs/file.bin")
      #expect(server.requests(forPathEndingWith: "file.bin") == 2)
      #expect(try await curl(server, "blobs/missing").status == 22)  // curl --fail on 404
    }
  }

  @Test func injectsFaults() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await withSUT { server in
      server.setFault(.status(500), forPathEndingWith: "file.bin")
      #expect(try await curl(server, "blobs/file.bin").status == 22)
      server.setFault(.dropAfter(1000), forPathEndingWith: "file.bin")
      #expect(try await curl(server, "blobs/file.bin").status == 18)  // partial transfer
      server.setFault(.truncate(1000), forPathEndingWith: "file.bin")
      let truncated = try await curl(server, "blobs/file.bin")
      #expect(truncated.status == 0 && truncated.body == payload.prefix(1000))
      server.setFault(.flipByte(10), forPathEndingWith: "file.bin")
      let flipped = try await curl(server, "blobs/file.bin")
      #expect(flipped.body.count == payload.count && flipped.body != payload)
      server.setFault(nil, forPathEndingWith: "file.bin")
      #expect(try await curl(server, "blobs/file.bin").body == payload)
    }
  }

  @Test func answersWithItsHandlerAndRecordsRequests() async throws {
    try await TestHTTPServer.answering({ request in
      switch request.path {
      case "/drop": TestHTTPServer.Reply(drop: true)
      case "/late": TestHTTPServer.Reply(body: Data("late".utf8), delay: .milliseconds(50))
      default: TestHTTPServer.Reply(status: 201, headers: ["X-Echo": request.method], body: Data("got ".utf8) + request.body)
      }
    }) { server in
      let echo = try await Command.run("/usr/bin/curl", ["-sS", "-i", "--data-binary", "payload", server.otherHostURL + "/echo?x=1"])
      #expect(echo.status == 0)
      #expect(echo.stdout.hasPrefix("HTTP/1.1 201"))
      #expect(echo.stdout.lowercased().contains("x-echo: post"))
      #expect(echo.stdout.hasSuffix("got payload"))
      let dropped = try await Command.run("/usr/bin/curl", ["-sS", server.url + "/drop"])
      #expect(dropped.status == 52)  // empty reply from server
      #expect(try await Command.run("/usr/bin/curl", ["-sS", server.url + "/late"]).stdout == "late")
      let requests = server.requests
      #expect(requests.map(\.target) == ["/echo?x=1", "/drop", "/late"])
      #expect(requests[0].method == "POST" && requests[0].body == Data("payload".utf8) && requests[0].query == "x=1")
      #expect(requests[0].headers["host"] == "localhost:\(server.port)")
      #expect(requests[1].headers["host"] == "127.0.0.1:\(server.port)")
      await server.stop()
      #expect(try await Command.run("/usr/bin/curl", ["-sS", server.url + "/echo"]).status == 7)  // connection refused
    }
  }
}
