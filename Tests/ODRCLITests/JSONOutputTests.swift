import Foundation
import ODRCLITesting
import ODRTesting
import Testing

/// Every `--json` output decodes into the mirror docs/json.md documents, with
/// every key present (null when absent) and times in ISO 8601.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct JSONOutputTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-json-\(UUID().uuidString)")

  var environment: [String: String] {
    var env = KeyringSession.shared.environment
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    env["ODR_CATALOG"] = root.appending(path: "pub").path
    env["ODR_SERVICE"] = nil
    return env
  }

  func odr(_ arguments: [String], noKeyring: Bool = false) async throws -> Command.Result {
    var env = environment
    // No keyring: prefetch skips the secrets tag instead of importing it.
    if noKeyring { env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(root.path)/no-bus" }
    return try await Command.odr(arguments, environment: env)
  }

  /// The JSON object's keys, and the object decoded as `T`.
  func decode<T: Decodable>(_ type: T.Type, _ result: Command.Result) throws -> (keys: Set<String>, value: T) {
    try #require(result.status == 0, "\(result.stderr)")
    let data = Data(result.stdout.utf8)
    let keys = Set(((try JSONSerialization.jsonObject(with: data)) as? [String: Any])?.keys.map { $0 } ?? [])
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    return (keys, try decoder.decode(T.self, from: data))
  }

  struct Status: Decodable {
    struct Pin: Decodable { let pid: Int32; let command: String?; let since: Date }
    struct Tag: Decodable {
      let name: String, category: String, order: Int, preservationPriority: Double, secrets: Bool, recipients: Int?
      let files: Int, bytes: Int64, onDisk: Bool, pins: Int, pinnedBy: [Pin], lastUse: Date?
    }
    struct Verification: Decodable { let checked: Int; let damaged: [String] }
    let bundle: String, version: Int, store: String, tags: [Tag], verification: Verification?
  }

  struct Purge: Decodable {
    struct Removal: Decodable { let tag: String; let bytes: Int64; let reason: String }
    struct Kept: Decodable { let tag: String; let reason: String }
    let removals: [Removal], kept: [Kept], sizeBefore: Int64, sizeAfter: Int64, budget: Int64?, dryRun: Bool
  }

  struct Prefetch: Decodable {
    struct Entry: Decodable { let tag: String, category: String, outcome: String, bytes: Int64, error: String?, code: String? }
    let entries: [Entry]
  }

  struct Verify: Decodable { let bundle: String, version: Int, signedBy: String?, expires: Date?, blobs: Int, problems: [String] }

  struct Pack: Decodable {
    struct Tag: Decodable { let name: String, category: String, files: Int, bytes: Int64, secrets: Bool, recipients: Int? }
    let bundle: String, version: Int, output: String, format: Int, signedBy: String?, alsoSignedBy: [String]?, expires: String?, tags: [Tag]
  }

  struct Begin: Decodable {
    struct Tag: Decodable { let name: String, files: Int, bytes: Int64 }
    let bundle: String, version: Int, store: String, holder: Int32, tags: [Tag]
  }

  @Test func everyOutputDecodesWithEveryKeyPresent() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    let pack = try decode(Pack.self, try await odr(["pack", Paths.packageRoot.appending(path: "resources/Demo").path, "--output",
                                                     root.appending(path: "pub").path, "--plaintext-secrets", "--json"]))
    #expect(pack.keys == ["bundle", "version", "output", "format", "signedBy", "alsoSignedBy", "expires", "tags"])
    #expect(pack.value.signedBy == nil && pack.value.alsoSignedBy == nil && pack.value.format == 2 && pack.value.tags.count == 3)

    let verify = try await odr(["verify", root.appending(path: "pub").path, "--json"])
    #expect(verify.status == 4)  // unsigned, plaintext secrets: problems, still a whole report
    let report = try JSONDecoder().decode(Verify.self, from: Data(verify.stdout.utf8))
    #expect(report.signedBy == nil && !report.problems.isEmpty)

    let begin = try decode(Begin.self, try await odr(["begin", "Level2", "--json", "--owner", "\(getpid())"]))
    #expect(begin.keys == ["bundle", "version", "store", "holder", "tags"])
    #expect(begin.value.holder == getpid() && begin.value.tags.map(\.name) == ["Level2"] && begin.value.tags[0].files == 3, "\(begin.value)")
    let path = try await odr(["path", "Level2", "--json"])
    let files = try JSONDecoder().decode([[String: String]].self, from: Data(path.stdout.utf8))
    #expect(files.count == 3 && files.allSatisfy { Set($0.keys) == ["file", "path"] && FileManager.default.fileExists(atPath: $0["path"] ?? "") }, "\(path.stdout)")
    let status = try decode(Status.self, try await odr(["status", "--json", "--verify"]))
    #expect(status.keys == ["bundle", "version", "store", "checked", "tags", "verification"])
    let level = try #require(status.value.tags.first { $0.name == "Level2" })
    #expect(level.onDisk && level.pins == 1 && level.lastUse != nil)
    #expect(abs(level.pinnedBy[0].since.timeIntervalSinceNow) < 600)
    #expect(try await odr(["status", "--json"]).stdout.contains(#""verification" : null"#))
    #expect(try await odr(["status", "--json"]).stdout.contains(#""recipients" : null"#))

    let purge = try decode(Purge.self, try await odr(["purge", "--all", "--dry-run", "--json"]))
    #expect(purge.keys == ["removals", "kept", "sizeBefore", "sizeAfter", "budget", "dryRun"])
    #expect(purge.value.dryRun && purge.value.budget == nil && purge.value.kept.map(\.tag) == ["Level2"])

    let prefetch = try decode(Prefetch.self, try await odr(["prefetch", "--json"], noKeyring: true))
    #expect(prefetch.value.entries.contains { $0.tag == "Onboarding" && $0.outcome == "downloaded" && $0.error == nil && $0.code == nil })
    #expect(prefetch.value.entries.contains { $0.tag == "APIKeys" && $0.outcome == "skipped" && $0.error != nil })
    #expect(try await odr(["prefetch", "--json"], noKeyring: true).stdout.contains(#""code" : null"#))
  }
}
