import Foundation
import ODRCLITesting
import ODRTesting
import Testing

/// Catalogs, configuration and processes an adversary or a careless user
/// controls: none may crash odr, reach the terminal raw, or escape the store.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(3))) struct HostileInputTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-hostile-\(UUID().uuidString)")
  let bundle = "com.odr.hostile.\(UUID().uuidString.prefix(8).lowercased())"
  var environment: [String: String] {
    var env = ProcessInfo.processInfo.environment
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    env["ODR_CATALOG"] = nil
    return env
  }

  func odr(_ arguments: [String], in folder: URL? = nil) async throws -> Command.Result {
    try await Command.odr(arguments, environment: environment, in: folder)
  }

  /// Writes a catalog folder by hand (no `odr pack`: it would refuse these).
  func catalog(_ json: String, at name: String = "pub") throws -> URL {
    let folder = root.appending(path: name)
    try FileManager.default.createDirectory(at: folder.appending(path: "blobs"), withIntermediateDirectories: true)
    try Data(json.utf8).write(to: folder.appending(path: "catalog.json"))
    return folder
  }

  func plainCatalog(version: Int, files: String = #"[{"path": "a.txt", "size": 1, "sha256": "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"}]"#) -> String {
    #"{"formatVersion": 1, "bundle": "\#(bundle)", "version": \#(version), "tags": {"T": {"category": "onDemand", "order": 0, "preservationPriority": 0.5, "secrets": false, "files": \#(files)}}}"#
  }

  @Test func sizesThatWouldOverflowAreRefusedNotACrash() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let huge = #"{"path": "a", "size": 4611686018427387904, "sha256": "\#(String(repeating: "a", count: 64))"}"#
    let other = huge.replacingOccurrences(of: #""a""#, with: #""b""#)
    let folder = try catalog(plainCatalog(version: 1, files: "[\(huge), \(other)]"))
    let begin = try await odr(["begin", "T", "--catalog", folder.path])
    #expect(begin.status == 1, "\(begin.stderr)")
    #expect(begin.stderr.contains("sizes are 0 to"))
    let budget = try await odr(["status", "--catalog", folder.path, "--max-size", "99999999999T"])
    #expect(budget.status == 2)
    #expect(budget.stderr.contains("larger than any store can be"))
    try Data(#"{"catalog": "\#(folder.path)", "maxSize": "99999999999T"}"#.utf8).write(to: root.appending(path: "odr.json"))
    #expect(try await odr(["status"], in: root).status == 2)
  }

  @Test func controlCharactersAndHugeNamesNeverReachTheTerminalRaw() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let escape = plainCatalog(version: 1, files: #"[{"path": "a\u001b[31m\nodr: forged line", "size": 1, "sha256": "\#(String(repeating: "a", count: 64))"}]"#)
    let result = try await odr(["status", "--catalog", try catalog(escape).path])
    #expect(result.status == 1)
    #expect(!result.stderr.contains("\u{1b}"))
    #expect(result.stderr.split(separator: "\n").count == 1)
    #expect(result.stderr.contains("\\u{1B}[31m\\n"))
    let long = try catalog(#"{"formatVersion": 1, "bundle": "\#(String(repeating: "x", count: 3_000_000))", "version": 1, "tags": {}}"#, at: "long")
    let big = try await odr(["status", "--catalog", long.path])
    #expect(big.status == 1)
    #expect(big.stderr.utf8.count < 2_100)
  }

  @Test func anotherLocationsUnsignedCatalogCannotLockOutTheRealOne() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let squatter = try catalog(plainCatalog(version: 999_999_999), at: "squatter")
    #expect(try await odr(["status", "--catalog", squatter.path]).status == 0)
    let real = try catalog(plainCatalog(version: 3), at: "real")
    let status = try await odr(["status", "--catalog", real.path])
    #expect(status.status == 0, "\(status.stderr)")
    let rollback = try catalog(plainCatalog(version: 2), at: "real")
    #expect(try await odr(["status", "--catalog", rollback.path]).status == 4)  // the same location still may not go back
  }

  @Test func credentialsInACatalogURLAreRefusedAndNeverEchoed() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let result = try await odr(["status", "--catalog", "https://alice:hunter2-secret@cdn.example/odr/"])
    #expect(result.status == 2)
    #expect(!result.output.contains("hunter2-secret"))
    #expect(!FileManager.default.fileExists(atPath: root.appending(path: "cache/odr/_catalogs.json").path))
  }

  @Test func aSymlinkedStoreFolderIsRefusedAndItsTargetUntouched() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let folder = try catalog(plainCatalog(version: 1))
    try Data("a".utf8).write(to: folder.appending(path: "blobs/ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"))
    let elsewhere = root.appending(path: "precious")
    try FileManager.default.createDirectory(at: elsewhere.appending(path: "blobs"), withIntermediateDirectories: true)
    try Data("keep".utf8).write(to: elsewhere.appending(path: "blobs/keep.txt"))
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: elsewhere.path)
    try FileManager.default.createDirectory(at: root.appending(path: "cache/odr"), withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(at: root.appending(path: "cache/odr/\(bundle)"), withDestinationURL: elsewhere)
    for arguments in [["begin", "T"], ["purge", "--all"]] {
      let result = try await odr(arguments + ["--catalog", folder.path])
      #expect(result.status == 1, "\(arguments): \(result.stderr)")
      #expect(result.stderr.contains("is a symlink or not a folder"))
    }
    #expect(FileManager.default.fileExists(atPath: elsewhere.appending(path: "blobs/keep.txt").path))
    #expect((try FileManager.default.attributesOfItem(atPath: elsewhere.path)[.posixPermissions] as? Int) == 0o755)
  }

  @Test func aProcessWhoseNameIsNotUTF8CanHoldPins() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let folder = try catalog(plainCatalog(version: 1))
    try Data("a".utf8).write(to: folder.appending(path: "blobs/ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"))
    // A holder whose command name (from its file name) is not UTF-8.
    // bash writes the raw bytes; Swift strings cannot hold them.
    let holder = Process()
    holder.executableURL = URL(filePath: "/bin/bash")
    holder.arguments = ["-c", #"ln -s /bin/sleep "$1"/sl$'\xff\xfe'ep && exec "$1"/sl$'\xff\xfe'ep 600"#, "bash", root.path]
    // Its own output: it must not hold the test runner's pipes open.
    holder.standardOutput = FileHandle.nullDevice
    holder.standardError = FileHandle.nullDevice
    try holder.run()
    while (FileManager.default.contents(atPath: "/proc/\(holder.processIdentifier)/comm") ?? Data()) != Data([0x73, 0x6c, 0xff, 0xfe, 0x65, 0x70, 0x0a]) {
      try #require(holder.isRunning)
      try await Task.sleep(for: .milliseconds(1))  // until bash has exec'd the holder
    }
    // The holder outlives any wait for a child slot under a loaded suite
    // (it slept 30 s once, and a busy CI run took longer: its pin was gone).
    defer { kill(holder.processIdentifier, SIGKILL) }
    let begin = try await odr(["begin", "T", "--catalog", folder.path, "--owner", "\(holder.processIdentifier)", "--quiet"])
    #expect(begin.status == 0, "\(begin.stderr)")
    let result = try await odr(["status", "--catalog", folder.path])
    #expect(result.stdout.contains("\t\(holder.processIdentifier)"), "\(result.output)")
  }
}
