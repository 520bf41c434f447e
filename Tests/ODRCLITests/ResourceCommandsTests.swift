import Foundation
import ODRCatalog
import ODRCLITesting
import ODRTesting
import Testing

/// `odr begin | end | path | status` run as a user would, on `file://`
/// catalogs, each test with its own cache home.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct ResourceCommandsTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-res-cli-\(UUID().uuidString)")
  var published: URL { root.appending(path: "pub") }
  var store: URL { root.appending(path: "cache/odr/com.example.demo") }
  var environment: [String: String] {
    var env = ProcessInfo.processInfo.environment
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    env["ODR_CATALOG"] = "file://" + published.path
    return env
  }

  func odr(_ arguments: [String]) async throws -> Command.Result {
    try await Command.odr(arguments, environment: environment)
  }

  /// The Demo sample plus a 4 MiB tag, published: big enough that a
  /// download is under way when a test kills it, small enough to cost little.
  func makeSUT() async throws {
    let source = root.appending(path: "src")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    try FileManager.default.copyItem(at: Paths.packageRoot.appending(path: "resources/Demo"), to: source)
    try await BigFile.write(source.appending(path: "movies/intro.bin"), size: 4 << 20)
    var tags = try String(contentsOf: source.appending(path: "tags.json"), encoding: .utf8)
    tags = tags.replacingOccurrences(of: #""tags": {"#, with: #""tags": { "Movie": { "category": "onDemand", "files": ["movies/"] },"#)
    try tags.write(to: source.appending(path: "tags.json"), atomically: true, encoding: .utf8)
    let pack = try await odr(["pack", source.path, "--output", published.path, "--quiet", "--plaintext-secrets"])
    try #require(pack.status == 0, "\(pack.stderr)")
  }

  var bigBlob: String {
    get throws {
      let catalog = try JSONSerialization.jsonObject(with: Data(contentsOf: published.appending(path: "catalog.json"))) as? [String: Any]
      let movie = (catalog?["tags"] as? [String: Any])?["Movie"] as? [String: Any]
      return try #require(((movie?["files"] as? [[String: Any]])?.first?["sha256"]) as? String)
    }
  }

  func storeFiles(_ folder: String) -> [String] {
    (try? FileManager.default.contentsOfDirectory(atPath: store.appending(path: folder).path)) ?? []
  }

  /// Every installed blob hashes to its name.
  func storeIsConsistent() async throws -> Bool {
    for name in storeFiles("blobs") where try FileIO.sha256(of: store.appending(path: "blobs/\(name)")).sha256 != name {
      return false
    }
    return storeFiles("partial").isEmpty
  }

  @Test func beginPinsAndEndInAnotherProcessUnpins() async throws {
    try await makeSUT()
    defer { try? FileManager.default.removeItem(at: root) }
    #expect(try await odr(["begin", "Onboarding"]).status == 0)
    #expect(try await odr(["begin", "Onboarding", "--if-present"]).status == 0)
    var status = try await odr(["status", "--json"])
    var tags = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
    var onboarding = (tags?["tags"] as? [[String: Any]])?.first { $0["name"] as? String == "Onboarding" }
    #expect(onboarding?["onDisk"] as? Bool == true)
    #expect(onboarding?["pins"] as? Int == 2)
    #expect(try await odr(["end", "Onboarding"]).status == 0)
    status = try await odr(["status", "--json"])
    tags = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
    onboarding = (tags?["tags"] as? [[String: Any]])?.first { $0["name"] as? String == "Onboarding" }
    #expect(onboarding?["pins"] as? Int == 1)
  }

  /// The pins of each tag, and their holders' pids, from `odr status --json`.
  func pins(_ tag: String) async throws -> (count: Int, holders: [Int32]) {
    let status = try await odr(["status", "--json"])
    let report = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
    let entry = (report?["tags"] as? [[String: Any]])?.first { $0["name"] as? String == tag }
    let holders = (entry?["pinnedBy"] as? [[String: Any]])?.compactMap { ($0["pid"] as? Int).map(Int32.init) } ?? []
    return (entry?["pins"] as? Int ?? -1, holders)
  }

  @Test func pinsOfAKilledHolderAreReclaimed() async throws {
    try await makeSUT()
    defer { try? FileManager.default.removeItem(at: root) }
    // A script pins Onboarding and keeps running (exec keeps its pid) until
    // killed below: long enough for a loaded CI machine (this test once took
    // 92 s there, and a 60 s sleep had ended before `--owner` named it).
    let script = Process()
    script.executableURL = URL(filePath: "/bin/sh")
    script.arguments = ["-c", #""$ODR" begin Onboarding --quiet && echo pinned && exec sleep 600"#]
    var env = environment
    env["ODR"] = Paths.odr.path
    script.environment = env
    let stdout = Pipe()
    script.standardOutput = stdout
    try script.run()
    #expect(await stdout.fileHandleForReading.nextLine() == "pinned")
    #expect(try await pins("Onboarding") == (1, [script.processIdentifier]))
    // odr end from another process removes it; a new pin by the script...
    #expect(try await odr(["end", "Onboarding"]).status == 0)
    #expect(try await pins("Onboarding").count == 0)
    let begin = try await odr(["begin", "Onboarding", "--owner", "\(script.processIdentifier)", "--quiet"])
    #expect(begin.status == 0, "\(begin.stderr)")
    #expect(try await odr(["begin", "Level2", "--quiet"]).status == 0)  // held by this test process
    #expect(try await pins("Onboarding") == (1, [script.processIdentifier]))
    // ...is reclaimed when the script dies without ending it.
    kill(script.processIdentifier, SIGKILL)
    await script.exited()
    #expect(try await pins("Onboarding").count == 0)
    #expect(try await pins("Level2") == (1, [getpid()]))
    #expect(try await odr(["begin", "Level2", "--owner", "999999999"]).status == 3)
  }

  @Test func offlineServesWhatIsOnDiskAndRefusesTheRest() async throws {
    try await makeSUT()
    defer { try? FileManager.default.removeItem(at: root) }
    // Never loaded on this machine: nothing to go on.
    let never = try await odr(["status", "--offline"])
    #expect(never.status == 7)
    #expect(never.stderr.contains("has never been loaded on this machine"))
    #expect(try await odr(["begin", "Onboarding", "--quiet"]).status == 0)
    // The publisher's folder goes away: offline still works from the store.
    try FileManager.default.moveItem(at: published, to: root.appending(path: "moved"))
    #expect(try await odr(["begin", "Onboarding", "--offline", "--quiet"]).status == 0)
    #expect(try await odr(["path", "Onboarding", "Onboarding/welcome.png", "--offline"]).status == 0)
    let missing = try await odr(["begin", "Level2", "--offline"])
    #expect(missing.status == 7)
    #expect(missing.stderr.contains("Offline: Level2 is not on disk"))
    #expect(storeFiles("partial").isEmpty)
    #expect(try await odr(["status", "--offline", "--verify"]).stderr.contains("verified: all"))
  }

  /// A store on a read-only file system (a container image's baked
  /// cache) is read offline without a lock file: nothing can write it.
  @Test func aReadOnlyStoreIsReadOffline() async throws {
    try await makeSUT()
    defer { try? FileManager.default.removeItem(at: root) }
    #expect(try await odr(["begin", "Onboarding", "--quiet"]).status == 0)
    let cache = root.appending(path: "cache").path
    let result = try await Command.run("/usr/bin/bwrap", ["--dev-bind", "/", "/", "--ro-bind", cache, cache, "--",
                                                          Paths.odr.path, "path", "Onboarding", "Onboarding/welcome.png", "--offline"],
                                       environment: environment)
    #expect(result.status == 0 && result.stdout.contains("/blobs/"), "\(result.stdout)\(result.stderr)")
  }

  @Test func statusVerifyFindsADamagedFile() async throws {
    try await makeSUT()
    defer { try? FileManager.default.removeItem(at: root) }
    #expect(try await odr(["begin", "Onboarding", "Level2", "--quiet"]).status == 0)
    let clean = try await odr(["status", "--verify"])
    #expect(clean.status == 0)
    #expect(clean.stderr.contains("verified: all \(storeFiles("blobs").count) files in the store match their SHA-256"))
    // Same size, one bit flipped: only a re-hash can tell.
    let victim = try #require(storeFiles("blobs").first)
    let url = store.appending(path: "blobs/\(victim)")
    var bytes = try Data(contentsOf: url)
    bytes[0] ^= 0x01
    try bytes.write(to: url)
    let damaged = try await odr(["status", "--verify", "--json"])
    #expect(damaged.status == 4)
    let report = try JSONSerialization.jsonObject(with: Data(damaged.stdout.utf8)) as? [String: Any]
    let verification = report?["verification"] as? [String: Any]
    #expect(verification?["damaged"] as? [String] == [victim])
    let files = try #require(verification?["damagedFiles"] as? [[String: String]])
    #expect(!files.isEmpty && files.allSatisfy { $0["sha256"] == victim })
    // Named by tag and path, with what to do; doing it repairs the store.
    let (tag, path) = (try #require(files[0]["tag"]), try #require(files[0]["path"]))
    #expect(damaged.stderr.contains("are damaged: \(tag): \(path)") && damaged.stderr.contains(String(victim.prefix(12))), "\(damaged.stderr)")
    #expect(damaged.stderr.contains("then `odr begin \(Set(files.compactMap { $0["tag"] }).sorted().joined(separator: " "))` downloads"), "\(damaged.stderr)")
    try FileManager.default.removeItem(at: url)
    #expect(try await odr(["begin", tag, "--quiet"]).status == 0)
    #expect(try await odr(["status", "--verify"]).status == 0)
  }

  @Test func pathPrintsTheVerifiedLocalFile() async throws {
    try await makeSUT()
    defer { try? FileManager.default.removeItem(at: root) }
    #expect(try await odr(["path", "Onboarding", "Onboarding/welcome.png"]).status == 3)
    #expect(try await odr(["begin", "Onboarding"]).status == 0)
    let path = try await odr(["path", "Onboarding", "Onboarding/welcome.png"]).stdout.trimmingCharacters(in: .newlines)
    let original = try Data(contentsOf: Paths.packageRoot.appending(path: "resources/Demo/Onboarding/welcome.png"))
    #expect(try Data(contentsOf: URL(filePath: path)) == original)
  }

  @Test func unknownTagExitsThreeAndIfPresentNeverDownloads() async throws {
    try await makeSUT()
    defer { try? FileManager.default.removeItem(at: root) }
    let unknown = try await odr(["begin", "Nope"])
    #expect(unknown.status == 3)
    #expect(unknown.stderr.contains("No tag 'Nope'") && !unknown.stderr.contains("Did you mean"))
    let misspelt = try await odr(["begin", "Levl2"])
    #expect(misspelt.status == 3 && misspelt.stderr.hasSuffix("Did you mean 'Level2'?\n"), "\(misspelt.stderr)")
    #expect(try await odr(["begin", "Level2", "--if-present"]).status == 3)
    #expect(storeFiles("blobs").isEmpty)
  }

  @Test func aTamperedBlobExitsFourAndInstallsNothing() async throws {
    try await makeSUT()
    defer { try? FileManager.default.removeItem(at: root) }
    let blob = published.appending(path: "blobs/\(try bigBlob)")
    let handle = try FileHandle(forUpdating: blob)
    try handle.seek(toOffset: 2 << 20)
    try handle.write(contentsOf: Data([0xff]))
    try handle.close()
    let result = try await odr(["begin", "Movie"])
    #expect(result.status == 4)
    #expect(result.stderr.contains("does not match the catalog"))
    #expect(!storeFiles("blobs").contains(try bigBlob))
    #expect(try await storeIsConsistent())
  }

  @Test func eightConcurrentBeginsAllSucceedAndLeaveOneCopy() async throws {
    try await makeSUT()
    defer { try? FileManager.default.removeItem(at: root) }
    let statuses = await withTaskGroup(of: Int32.self) { group in
      for _ in 0..<8 { group.addTask { (try? await odr(["begin", "Movie", "Onboarding"]))?.status ?? -1 } }
      return await group.reduce(into: []) { $0.append($1) }
    }
    #expect(statuses == Array(repeating: 0, count: 8))
    #expect(storeFiles("blobs").filter { $0 == (try? bigBlob) }.count == 1)
    #expect(try await storeIsConsistent())
    let status = try await JSONSerialization.jsonObject(with: Data(odr(["status", "--json"]).stdout.utf8)) as? [String: Any]
    let movie = (status?["tags"] as? [[String: Any]])?.first { $0["name"] as? String == "Movie" }
    #expect(movie?["pins"] as? Int == 8)
  }

  @Test func aKilledBeginLeavesNothingBrokenAndTheRetryCompletes() async throws {
    try await makeSUT()
    defer { try? FileManager.default.removeItem(at: root) }
    // Publish the big blob through a FIFO so the install stops mid-stream,
    // deterministically, until the test kills it.
    let blob = published.appending(path: "blobs/\(try bigBlob)")
    let real = root.appending(path: "real.bin")
    try FileManager.default.moveItem(at: blob, to: real)
    #expect(mkfifo(blob.path, 0o600) == 0)
    let process = Process()
    process.executableURL = Paths.odr
    process.arguments = ["begin", "Movie"]
    process.environment = environment
    process.standardError = FileHandle.nullDevice
    try process.run()
    let writer = try FileHandle(forWritingTo: blob)
    let head = try Data(contentsOf: real).prefix(2 << 20)
    try await Command.offPool { try writer.write(contentsOf: head) }  // blocks until odr has read it
    // Wait until odr has written part of the blob, then kill it.
    let partial = store.appending(path: "partial/\(try bigBlob)")
    for _ in 0..<400 where ((try? FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? Int) ?? 0) < 1 << 20 {
      try await Task.sleep(for: .milliseconds(10))
    }
    kill(process.processIdentifier, SIGKILL)
    await process.exited()
    try? writer.close()
    #expect(process.terminationReason == .uncaughtSignal)
    #expect(!storeFiles("blobs").contains(try bigBlob))
    #expect(storeFiles("partial") == [try bigBlob])
    // Any later run clears what the killed one left.
    #expect(try await odr(["status"]).status == 0)
    #expect(storeFiles("partial").isEmpty)
    try FileManager.default.removeItem(at: blob)
    try FileManager.default.moveItem(at: real, to: blob)
    #expect(try await odr(["begin", "Movie"]).status == 0)
    #expect(storeFiles("blobs").contains(try bigBlob))
    #expect(try await storeIsConsistent())
  }
}

