import Foundation
import ODRCLITesting
import ODRTesting
import Testing

/// `odr prefetch` against the loopback server: order, categories, the
/// parallel bound (counted server-side), and failures that stop nothing.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct PrefetchCommandTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-prefetch-\(UUID().uuidString)")

  /// initial I; prefetch P0, P1, P2 with orders 0, 2, 1; prefetch Q3…Q5; onDemand O.
  /// Each tag one distinct 64 KiB file. Returns the blob name of each tag.
  func publish() async throws -> [String: String] {
    let source = root.appending(path: "src")
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    let tags: [(String, String, Int)] = [("I", "initial", 0), ("P0", "prefetch", 0), ("P1", "prefetch", 2), ("P2", "prefetch", 1),
                                         ("Q3", "prefetch", 3), ("Q4", "prefetch", 4), ("Q5", "prefetch", 5), ("O", "onDemand", 0)]
    var entries: [String] = []
    for (index, (name, category, order)) in tags.enumerated() {
      try Data(repeating: UInt8(index + 1), count: 64 << 10).write(to: source.appending(path: "\(name).bin"))
      entries.append(#""\#(name)": {"category": "\#(category)", "order": \#(order), "files": ["\#(name).bin"]}"#)
    }
    try Data(#"{"bundle": "com.example.prefetch", "tags": {\#(entries.joined(separator: ", "))}}"#.utf8)
      .write(to: source.appending(path: "tags.json"))
    let pack = try await Command.odr(["pack", source.path, "--output", root.appending(path: "pub").path, "--quiet", "--plaintext-secrets"])
    try #require(pack.status == 0)
    let catalog = try JSONSerialization.jsonObject(with: Data(contentsOf: root.appending(path: "pub/catalog.json"))) as? [String: Any]
    var blobs: [String: String] = [:]
    for (name, tag) in catalog?["tags"] as? [String: [String: Any]] ?? [:] {
      blobs[name] = ((tag["files"] as? [[String: Any]])?.first?["sha256"]) as? String
    }
    return blobs
  }

  func odr(_ arguments: [String], server: TestHTTPServer) async throws -> Command.Result {
    var env = ProcessInfo.processInfo.environment
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    env["ODR_CATALOG"] = server.baseURL.absoluteString
    return try await Command.odr(arguments, environment: env)
  }

  @Test func initialFirstThenPrefetchByOrderNeverOnDemand() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let blobs = try await publish()
    try await TestHTTPServer.serving(files: root.appending(path: "pub")) { server in
      let result = try await odr(["prefetch", "--parallel", "1"], server: server)
      #expect(result.status == 0, "\(result.stderr)")
      let fetched = server.requestOrder.filter { $0.contains("/blobs/") }.map { path in blobs.first { path.hasSuffix($0.value) }!.key }
      #expect(fetched == ["I", "P0", "P2", "P1", "Q3", "Q4", "Q5"])
      #expect(result.stdout.split(separator: "\n").count == 7)
      // Again: everything is on disk, nothing is downloaded.
      let again = try await odr(["prefetch", "--json"], server: server)
      let report = try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any]
      #expect((report?["entries"] as? [[String: Any]])?.allSatisfy { $0["outcome"] as? String == "already-on-disk" } == true)
      #expect(server.requestOrder.filter { $0.contains("/blobs/") }.count == 7)
    }
  }

  @Test(arguments: [3, 6])
  func theParallelBoundIsRespected(parallel: Int) async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let blobs = try await publish()
    try await TestHTTPServer.serving(files: root.appending(path: "pub")) { server in
      for blob in blobs.values { server.setFault(.slow(chunk: 16 << 10, pause: .milliseconds(40)), forPathEndingWith: blob) }
      let prefetch = try await odr(["prefetch", "--parallel", "\(parallel)", "--quiet"], server: server)
      #expect(prefetch.status == 0)
      #expect(server.maxConcurrentRequests == parallel)
    }
  }

  @Test func aFailedTagDoesNotStopTheOthers() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let blobs = try await publish()
    try await TestHTTPServer.serving(files: root.appending(path: "pub")) { server in
      server.setFault(.status(500), forPathEndingWith: blobs["P2"]!)
      server.setFault(.flipByte(10), forPathEndingWith: blobs["Q4"]!)
      let result = try await odr(["prefetch", "--json"], server: server)
      #expect(result.status == 7)  // the first failure, P2's 500
      #expect(result.stderr.contains("2 of 7 tags failed"))
      let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
      let outcomes = Dictionary(uniqueKeysWithValues: (report?["entries"] as? [[String: Any]] ?? []).map { ($0["tag"] as! String, $0["outcome"] as! String) })
      #expect(outcomes == ["I": "downloaded", "P0": "downloaded", "P2": "failed", "P1": "downloaded", "Q3": "downloaded", "Q4": "failed", "Q5": "downloaded"])
      let status = try await odr(["status", "--verify"], server: server)
      #expect(status.status == 0)
    }
  }
}
