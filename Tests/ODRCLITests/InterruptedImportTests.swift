import Foundation
import ODRCLITesting
import ODRTesting
import Testing

/// The keyring dies in the middle of `odr fetch`: once it is back, every
/// reader sees the keys as they were before the import, without writing,
/// until `odr doctor --repair` or the next fetch puts them back
/// (docs/design.md, "Keyring layout", all or nothing).
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct InterruptedImportTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-crash-\(UUID().uuidString)")
  let bundle = "com.odr.crash.\(UUID().uuidString.prefix(8).lowercased())"
  let count = 150

  func document(_ generation: String) -> String {
    "{" + (1...count).map { "\"K\(String(format: "%03d", $0))\": \"\(generation)-\($0)-\(bundle)\"" }.joined(separator: ", ") + "}"
  }

  func publish(_ generation: String, version: Int, environment: [String: String]) async throws {
    let source = root.appending(path: "src")
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    try Data(#"{"bundle": "\#(bundle)", "tags": {"APIKeys": {"category": "prefetch", "secrets": true, "files": ["APIKeys.json"]}}}"#.utf8)
      .write(to: source.appending(path: "tags.json"))
    try Data(document(generation).utf8).write(to: source.appending(path: "APIKeys.json"))
    let pack = try await Command.odr(["pack", source.path, "--output", root.appending(path: "pub").path, "--catalog-version", "\(version)", "--quiet", "--plaintext-secrets"],
                               environment: environment)
    try #require(pack.status == 0, "\(pack.stderr)")
  }

  @Test func keyringKilledMidImportLeavesThePreviousValues() async throws {
    let session = try await KeyringSession.start()
    defer { session.end() }
    defer { try? FileManager.default.removeItem(at: root) }
    var env = session.environment
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    env["ODR_CATALOG"] = root.appending(path: "pub").path
    env["ODR_SERVICE"] = nil
    /// The first key's, the second's, the last one's and the journal's
    /// values in the keyring, read by another client.
    let probed = ["K001", "K002", String(format: "K%03d", count), "_odr.journal"]
    func keyring() async throws -> [String: String] {
      try await Command.keyringValues(service: bundle, keys: probed, environment: env)
    }

    try await publish("old", version: 1, environment: env)
    try #require(try await Command.odr(["fetch", "APIKeys", "--quiet"], environment: env).status == 0)
    try await publish("new", version: 2, environment: env)

    // No other test's child runs meanwhile: the kill must land mid-import.
    let fetchEnvironment = env
    let (status, message) = try await Command.exclusively { () async throws -> (Int32, String) in
      let fetch = Process()
      fetch.executableURL = Paths.odr
      fetch.arguments = ["fetch", "APIKeys", "--quiet"]
      fetch.environment = fetchEnvironment
      let stderr = Pipe()
      fetch.standardError = stderr
      fetch.standardOutput = FileHandle.nullDevice
      // Kill the daemon as soon as the first new value has landed: a
      // watcher on one connection of its own (Python's secretstorage) looks
      // for it every millisecond and exits when it is there (or after 5 s).
      let watcher = Process()
      watcher.executableURL = URL(filePath: "/usr/bin/env")
      watcher.arguments = ["python3", "-c", """
        import secretstorage, sys, time
        connection = secretstorage.dbus_init()
        print("watching", flush=True)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            items = list(secretstorage.search_items(connection, {'service': sys.argv[1], 'key': 'K001'}))
            if items and items[0].get_secret().decode() == sys.argv[2]:
                break
            time.sleep(0.001)
        """, bundle, "new-1-\(bundle)"]
      watcher.environment = fetchEnvironment
      let watching = Pipe()
      watcher.standardOutput = watching
      try watcher.run()
      try #require(await watching.fileHandleForReading.nextLine() == "watching")
      try fetch.run()
      await watcher.exited()
      kill(session.daemonPID, SIGKILL)
      await fetch.exited()
      return (fetch.terminationStatus, String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }
    #expect(status != 0, "the import finished before the kill; make the document bigger")
    #expect(!message.contains("-\(bundle)"))

    let daemon = try session.startDaemonAgain()
    defer { kill(daemon, SIGKILL) }
    // The keyring came back half-imported: the first key new, the last old.
    let halfway = try await keyring()
    #expect(halfway["K001"] == "new-1-\(bundle)")
    #expect(halfway[String(format: "K%03d", count)] == "old-\(count)-\(bundle)")
    #expect(halfway["_odr.journal"] != nil)

    // Every reader sees the keys as they were before the import — odr get,
    // odr read, odr env, odr exec alike — and none of them writes.
    let env1 = try await Command.odr(["env", "--format", "json", "--service", bundle], environment: env)
    #expect(env1.status == 0, "\(env1.stderr)")
    let values = try JSONSerialization.jsonObject(with: Data(env1.stdout.utf8)) as? [String: String]
    #expect(values?.count == count)
    #expect(values?.values.allSatisfy { $0.hasPrefix("old-") } == true)
    let get = try await Command.odr(["get", "K001", "--service", bundle], environment: env)
    #expect(get.stdout == "old-1-\(bundle)", "\(get.stderr)")
    let read = try await Command.odr(["read", "odr://\(bundle)/K001"], environment: env)
    #expect(read.stdout == "old-1-\(bundle)", "\(read.stderr)")
    let exec = try await Command.odr(["exec", "--service", bundle, "--no-mask", "--", "sh", "-c", #"printf '%s' "$K001""#], environment: env)
    #expect(exec.stdout == "old-1-\(bundle)", "\(exec.stderr)")
    #expect(try await keyring() == halfway)

    // odr doctor --repair puts the previous values back in the keyring.
    let repair = try await Command.odr(["doctor", "--repair", "--service", bundle], environment: env)
    #expect(repair.status == 0, "\(repair.output)")
    #expect(repair.stdout.contains("Put back"), "\(repair.stdout)")
    let repaired = try await keyring()
    #expect(repaired.keys.sorted() == probed.dropLast().sorted() && repaired.values.allSatisfy { $0.hasPrefix("old-") }, "\(repaired)")

    // And a new fetch completes the import.
    #expect(try await Command.odr(["fetch", "APIKeys", "--quiet"], environment: env).status == 0)
    let fetched = try await keyring()
    #expect(fetched.keys.sorted() == probed.dropLast().sorted() && fetched.values.allSatisfy { $0.hasPrefix("new-") }, "\(fetched)")
  }
}
