import Foundation
import ODRCLITesting
import ODRTesting
import Testing

/// What a careless or hostile pack, or a foreign keyring item, can no
/// longer do through the CLI.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(3))) struct HygieneCommandsTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-hygiene-\(UUID().uuidString)")
  let service = "com.odr.hygiene.\(UUID().uuidString.prefix(8).lowercased())"
  var environment: [String: String] {
    var env = KeyringSession.shared.environment
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    env["ODR_SERVICE"] = service
    return env
  }

  func odr(_ arguments: [String], input: String? = nil) async throws -> Command.Result {
    try await Command.odr(arguments, input: input, environment: environment)
  }

  @Test func aForeignItemIsSkippedWithOneWarningInsteadOfFailingEveryKey() async throws {
    #expect(try await odr(["set", "Weather"], input: "w-1").status == 0)
    let stored = try await Command.secretTool(["store", "--label=foreign", "service", service, "key", "bad name"], input: "f-1", environment: environment)
    #expect(stored.status == 0)
    let env = try await odr(["env", "--format", "json"])
    #expect(env.status == 0, "\(env.stderr)")
    #expect(env.stdout.contains("\"WEATHER\" : \"w-1\""))
    #expect(env.stderr == "odr: skipped key 'bad name': 'BAD NAME' is not an upper-case variable name ([A-Z][A-Z0-9]*(_[A-Z0-9]+)*, at most 64 characters).\n")
    #expect(!env.output.contains("f-1"))
    #expect(try await odr(["exec", "--", "/bin/sh", "-c", "test \"$WEATHER\" = w-1"]).status == 0)
    #expect(try await odr(["exec", "--only", "bad name", "--", "/bin/true"]).status == 1)
  }

  @Test func odrsOwnRecordsCannotBeReadWrittenOrDeletedByName() async throws {
    for arguments in [["get", "_odr.journal"], ["get", "_odr.metadata"], ["delete", "_odr.journal"]] {
      let result = try await odr(arguments)
      #expect(result.status == 2, "\(arguments)")
      #expect(result.stderr.contains("reserved for odr's own records"))
    }
    #expect(try await odr(["set", "_odr.metadata"], input: "{}").status == 2)
  }

  @Test func packAndFetchRefuseDocumentsThatWouldTakeOverTheJob() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let source = root.appending(path: "src")
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    try Data(#"{"bundle": "\#(service)", "tags": {"APIKeys": {"category": "prefetch", "secrets": true, "files": ["APIKeys.json"]}}}"#.utf8)
      .write(to: source.appending(path: "tags.json"))
    try Data(#"{"keys": {"Hook": {"value": "v-1", "env": "GIT_SSH_COMMAND"}}}"#.utf8).write(to: source.appending(path: "APIKeys.json"))
    let pack = try await odr(["pack", source.path, "--output", root.appending(path: "pub").path, "--plaintext-secrets"])
    #expect(pack.status == 1)
    #expect(pack.stderr.contains("Key 'Hook': GIT_SSH_COMMAND is one of the variables programs read"))
    #expect(!FileManager.default.fileExists(atPath: root.appending(path: "pub").path))
  }

  @Test func fetchIntoTheMemoryStoreIsRefusedAndDryRunWritesNothing() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let source = root.appending(path: "src")
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    try Data(#"{"bundle": "\#(service)", "tags": {"APIKeys": {"category": "prefetch", "secrets": true, "files": ["APIKeys.json"]}}}"#.utf8)
      .write(to: source.appending(path: "tags.json"))
    try Data(#"{"Weather": "w-1", "Maps": "m-1"}"#.utf8).write(to: source.appending(path: "APIKeys.json"))
    let catalog = root.appending(path: "pub").path
    #expect(try await odr(["pack", source.path, "--output", catalog, "--plaintext-secrets", "--quiet"]).status == 0)
    let memory = try await odr(["fetch", "APIKeys", "--catalog", catalog, "--store", "memory"])
    #expect(memory.status == 2)
    #expect(memory.stderr.contains("odr exec --fetch"))
    #expect(try await odr(["set", "Manual"], input: "by hand").status == 0)
    let dry = try await odr(["fetch", "APIKeys", "--catalog", catalog, "--dry-run", "--prune"])
    #expect(dry.status == 0)
    #expect(dry.stdout == "would be added     Maps\nwould be added     Weather\n")
    #expect(try await odr(["list"]).stdout == "Manual\n")
    #expect(try await odr(["fetch", "APIKeys", "--catalog", catalog, "--prune", "--quiet"]).status == 0)
    #expect(try await odr(["list"]).stdout == "Manual\nMaps\nWeather\n")  // --prune never deletes what `odr set` stored
  }
}
