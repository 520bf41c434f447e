import Foundation
import ODRCLITesting
import ODRTesting
import Testing

/// `odr purge`, `odr priority` and the store budget, on a catalog of four
/// 1,000-byte tags with distinct contents.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct PurgeCommandsTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-purge-\(UUID().uuidString)")
  var store: URL { root.appending(path: "cache/odr/com.example.purge") }
  var environment: [String: String] {
    var env = ProcessInfo.processInfo.environment
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    env["ODR_CATALOG"] = root.appending(path: "pub").path
    env["ODR_MAX_SIZE"] = nil
    return env
  }

  func odr(_ arguments: [String]) async throws -> Command.Result {
    try await Command.odr(arguments, environment: environment)
  }

  /// Tags A, B, C, D of 1,000 bytes each; C's catalog priority is 0.9.
  func makeSUT() async throws {
    let source = root.appending(path: "src")
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    for name in ["A", "B", "C", "D"] {
      try Data(repeating: UInt8(ascii: name.first!.asciiValue.map { Unicode.Scalar($0) }!), count: 1000).write(to: source.appending(path: "\(name).bin"))
    }
    try Data("""
      { "bundle": "com.example.purge", "tags": {
        "A": { "category": "onDemand", "files": ["A.bin"] },
        "B": { "category": "onDemand", "files": ["B.bin"] },
        "C": { "category": "onDemand", "preservationPriority": 0.9, "files": ["C.bin"] },
        "D": { "category": "onDemand", "files": ["D.bin"] } } }
      """.utf8).write(to: source.appending(path: "tags.json"))
    let pack = try await odr(["pack", source.path, "--output", root.appending(path: "pub").path, "--quiet", "--plaintext-secrets"])
    try #require(pack.status == 0, "\(pack.stderr)")
  }

  func onDisk() async throws -> Set<String> {
    let report = try await JSONSerialization.jsonObject(with: Data(odr(["status", "--json"]).stdout.utf8)) as? [String: Any]
    let tags = report?["tags"] as? [[String: Any]] ?? []
    return Set(tags.filter { $0["onDisk"] as? Bool == true }.compactMap { $0["name"] as? String })
  }

  /// Every file of the store with its bytes: to show nothing changed.
  func snapshot() throws -> [String: Data] {
    var files: [String: Data] = [:]
    let enumerator = FileManager.default.enumerator(at: store, includingPropertiesForKeys: nil)
    while let url = enumerator?.nextObject() as? URL {
      if let data = try? Data(contentsOf: url) { files[url.path] = data }
    }
    return files
  }

  /// Begins and ends `tags` one by one, so their last uses are in that order.
  func use(_ tags: [String]) async throws {
    for tag in tags {
      try #require(try await odr(["begin", tag, "--quiet"]).status == 0)
      try #require(try await odr(["end", tag]).status == 0)
      try await Task.sleep(for: .milliseconds(20))  // distinct last-use times, not a synchronisation
    }
  }

  @Test func purgeGoesByPriorityThenLeastRecentlyUsedAndSparesPins() async throws {
    try await makeSUT()
    defer { try? FileManager.default.removeItem(at: root) }
    try await use(["B", "A", "C", "D"])   // LRU order: B, A, C, D
    #expect(try await odr(["priority", "D", "0.1"]).status == 0)  // D goes first despite recent use
    #expect(try await odr(["begin", "A", "--quiet"]).status == 0)  // A is pinned
    let dry = try await odr(["purge", "--max-size", "1500", "--dry-run"])
    #expect(dry.status == 0)
    let lines = dry.stdout.split(separator: "\n").map(String.init)
    #expect(lines.filter { $0.hasPrefix("would remove") }.map { $0.split(separator: " ")[2] } == ["D", "B", "C"])
    #expect(lines.contains { $0.hasPrefix("kept A: pinned by ") })
    #expect(try await onDisk() == ["A", "B", "C", "D"])  // the dry run changed nothing
    // A budget of 2,000 bytes: D (priority 0.1) and B (least recently used of 0.5) go.
    #expect(try await odr(["purge", "--max-size", "2000"]).status == 0)
    #expect(try await onDisk() == ["A", "C"])
    #expect(try await odr(["purge", "--all"]).status == 0)
    #expect(try await onDisk() == ["A"])
    #expect(try await odr(["status", "--verify"]).status == 0)
  }

  @Test func aRequestThatCannotFitChangesNothing() async throws {
    try await makeSUT()
    defer { try? FileManager.default.removeItem(at: root) }
    try await use(["A", "B"])
    #expect(try await odr(["begin", "C", "--quiet"]).status == 0)  // pinned: not purgeable
    let before = try snapshot()
    // 3,000 on disk; D needs 1,000 under a 1,500 budget: even purging A and B leaves C + D = 2,000.
    let result = try await odr(["begin", "D", "--max-size", "1500"])
    #expect(result.status == 8)
    #expect(result.stderr.contains("Nothing was changed"))
    #expect(result.stderr.contains("end access to C"))
    #expect(try snapshot() == before)
    // With room for it after purging, the request purges the least valuable and succeeds.
    #expect(try await odr(["begin", "D", "--max-size", "3000", "--quiet"]).status == 0)  // A, least recently used, goes
    #expect(try await onDisk() == ["B", "C", "D"])
  }

  @Test func purgeNeedsABudgetOrAll() async throws {
    try await makeSUT()
    defer { try? FileManager.default.removeItem(at: root) }
    #expect(try await odr(["purge"]).status == 2)
    // The budget can come from the project file.
    try Data(#"{"catalog": "\#(root.appending(path: "pub").path)", "maxSize": "1500"}"#.utf8).write(to: root.appending(path: "odr.json"))
    var env = environment
    env["ODR_CATALOG"] = nil
    env["ODR"] = Paths.odr.path
    let fromConfig = try await Command.run("/bin/sh", ["-c", #"cd "$1" && "$ODR" trust adopt --quiet && "$ODR" purge --dry-run"#, "-", root.path], environment: env)
    #expect(fromConfig.status == 0, "\(fromConfig.stderr)")
    #expect(fromConfig.stdout.contains("(budget 1.5 KiB)"))  // sizes are shown for people now (issue 15)
    #expect(try await odr(["begin", "A", "--priority", "urgent", "--quiet"]).status == 0)
    #expect(try await odr(["begin", "A", "--priority", "2"]).status == 2)
    #expect(try await odr(["priority", "A", "1.5"]).status == 2)
    #expect(try await odr(["priority", "Nope", "0.5"]).status == 3)
  }
}
