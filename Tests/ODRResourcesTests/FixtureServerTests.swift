import Foundation
import ODRTesting
import Testing

/// The fault-injecting test server, checked with curl as the client.
@Suite(.timeLimit(.minutes(2))) struct FixtureServerTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-fixture-\(UUID().uuidString)")
  let payload = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })

  func makeSUT() throws -> FixtureServer {
    try FileManager.default.createDirectory(at: root.appending(path: "blobs"), withIntermediateDirectories: true)
    try payload.write(to: root.appending(path: "blobs/file.bin"))
    return try FixtureServer(root: root)
  }

  func curl(_ server: FixtureServer, _ path: String) async throws -> (status: Int32, body: Data) {
    let out = root.appending(path: "out-\(UUID().uuidString)")
    let result = try await Command.run("/usr/bin/curl", ["-sS", "-o", out.path, "--fail", server.baseURL.appending(path: path).absoluteString])
    return (result.status, (try? Data(contentsOf: out)) ?? Data())
  }

  @Test func servesFilesAndCountsRequests() async throws {
    let server = try makeSUT()
    defer { server.stop(); try? FileManager.default.removeItem(at: root) }
    let (status, body) = try await curl(server, "blobs/file.bin")
    #expect(status == 0)
    #expect(body == payload)
    _ = try await curl(server, "blobs/file.bin")
    #expect(server.requests(forPathEndingWith: "file.bin") == 2)
    #expect(try await curl(server, "blobs/missing").status == 22)  // curl --fail on 404
  }

  @Test func injectsFaults() async throws {
    let server = try makeSUT()
    defer { server.stop(); try? FileManager.default.removeItem(at: root) }
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
