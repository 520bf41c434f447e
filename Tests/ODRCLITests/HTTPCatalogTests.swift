import Foundation
import ODRCatalog
import ODRCLITesting
import ODRTesting
import Testing

/// `odr begin` and `odr fetch` against catalogs served over HTTP by a test
/// server on 127.0.0.1 (in `odr` itself: AsyncHTTPClient).
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct HTTPCatalogTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-http-cli-\(UUID().uuidString)")
  var store: URL { root.appending(path: "cache/odr/com.example.demo") }

  /// Publishes the Demo sample plus an 8 MB tag and runs `test` with it
  /// served (and the big file's SHA-256).
  func withSUT(_ test: (TestHTTPServer, _ bigSHA: String) async throws -> Void) async throws {
    let source = root.appending(path: "src")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    try FileManager.default.copyItem(at: Paths.packageRoot.appending(path: "resources/Demo"), to: source)
    try await BigFile.write(source.appending(path: "movies/intro.bin"), size: 8_000_000, fill: 0x5a)
    var tags = try String(contentsOf: source.appending(path: "tags.json"), encoding: .utf8)
    tags = tags.replacingOccurrences(of: #""tags": {"#, with: #""tags": { "Movie": { "category": "onDemand", "files": ["movies/"] },"#)
    try tags.write(to: source.appending(path: "tags.json"), atomically: true, encoding: .utf8)
    let pack = try await Command.odr(["pack", source.path, "--output", root.appending(path: "pub").path, "--quiet", "--plaintext-secrets"])
    try #require(pack.status == 0, "\(pack.stderr)")
    let sha = try FileIO.sha256(of: source.appending(path: "movies/intro.bin")).sha256
    try await TestHTTPServer.serving(files: root.appending(path: "pub")) { server in try await test(server, sha) }
  }

  func environment(_ server: TestHTTPServer) -> [String: String] {
    var env = KeyringSession.shared.environment
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    env["ODR_CATALOG"] = server.baseURL.absoluteString
    env["ODR_SERVICE"] = nil
    return env
  }

  func blobs(_ folder: String = "blobs") -> [String] {
    (try? FileManager.default.contentsOfDirectory(atPath: store.appending(path: folder).path)) ?? []
  }

  func storeIsConsistent() async throws -> Bool {
    for name in blobs() where try FileIO.sha256(of: store.appending(path: "blobs/\(name)")).sha256 != name {
      return false
    }
    return blobs("partial").isEmpty
  }

  @Test func eightConcurrentBeginsRequestEachBlobOnce() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await withSUT { server, sha in
      let env = environment(server)
      let statuses = await withTaskGroup(of: Int32.self) { group in
        for _ in 0..<8 { group.addTask { (try? await Command.odr(["begin", "Movie", "Onboarding"], environment: env))?.status ?? -1 } }
        return await group.reduce(into: []) { $0.append($1) }
      }
      #expect(statuses == Array(repeating: 0, count: 8))
      #expect(server.requests(forPathEndingWith: sha) == 1)
      #expect(server.requests(forPathEndingWith: "welcome.png") == 0)  // blobs are fetched by hash only
      let consistent = try await storeIsConsistent()
      #expect(consistent)
    }
  }

  @Test(arguments: [
    (TestHTTPServer.Fault.status(404), Int32(7)), (.status(500), 7), (.dropAfter(2_000_000), 7),
    (.truncate(2_000_000), 4), (.flipByte(5_000_000), 4),
  ])
  func faultsExitWithTheirCodeAndARetrySucceeds(fault: TestHTTPServer.Fault, code: Int32) async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await withSUT { server, sha in
      server.setFault(fault, forPathEndingWith: sha)
      let failed = try await Command.odr(["begin", "Movie"], environment: environment(server))
      #expect(failed.status == code, "\(failed.stderr)")
      #expect(!blobs().contains(sha))
      server.setFault(nil, forPathEndingWith: sha)
      #expect(try await Command.odr(["begin", "Movie"], environment: environment(server)).status == 0)
      #expect(try await storeIsConsistent())
    }
  }

  @Test func aBeginKilledMidDownloadLeavesNothingBrokenAndTheRetryCompletes() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await withSUT { server, sha in
      server.setFault(.slow(chunk: 256 * 1024, pause: .milliseconds(20)), forPathEndingWith: sha)
      let process = Process()
      process.executableURL = Paths.odr
      process.arguments = ["begin", "Movie"]
      process.environment = environment(server)
      process.standardError = FileHandle.nullDevice
      try process.run()
      let partial = store.appending(path: "partial/\(sha)")
      for _ in 0..<500 where ((try? FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? Int) ?? 0) < 2 << 20 {
        try await Task.sleep(for: .milliseconds(10))
      }
      kill(process.processIdentifier, SIGKILL)
      await process.exited()
      #expect(process.terminationReason == .uncaughtSignal)
      #expect(!blobs().contains(sha))
      server.setFault(nil, forPathEndingWith: sha)
      #expect(try await Command.odr(["begin", "Movie"], environment: environment(server)).status == 0)
      #expect(blobs().contains(sha))
      #expect(try await storeIsConsistent())
    }
  }

  @Test func aTerminalGetsAProgressBarADumbTerminalPlainLinesAndAPipeNothing() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await withSUT { server, sha in
      server.setFault(.slow(chunk: 256 << 10, pause: .milliseconds(20)), forPathEndingWith: sha)
      // `script` runs odr on a pseudo-terminal and copies what it shows.
      func onTerminal(_ term: String, _ arguments: String = "") async throws -> Command.Result {
        var env = environment(server)
        env["TERM"] = term
        try? FileManager.default.removeItem(at: store.appending(path: "blobs/\(sha)"))
        return try await Command.run("/usr/bin/script", ["-qec", "\(Paths.odr.path) begin Movie\(arguments)", "/dev/null"], environment: env)
      }
      let terminal = try await onTerminal("xterm")
      #expect(terminal.status == 0, "\(terminal.output)")
      #expect(terminal.stdout.contains("\r\u{1b}[2KMovie [########################] 7.6 / 7.6 MiB"), "\(terminal.stdout)")
      #expect(terminal.stdout.range(of: #"MiB  [0-9]+\.[0-9] MiB/s, [0-9]+ s left"#, options: .regularExpression) != nil, "\(terminal.stdout)")
      #expect(!terminal.stdout.contains(" 0.0 MiB/s"))
      // TERM=dumb: plain lines, not one escape sequence or carriage return of odr's own.
      let dumb = try await onTerminal("dumb")
      #expect(dumb.status == 0, "\(dumb.output)")
      let lines = dumb.stdout.split(separator: "\r\n").map(String.init)
      #expect(!dumb.stdout.contains("\u{1b}") && !lines.contains { $0.contains("\r") }, "\(dumb.stdout)")
      #expect(lines.contains { $0.range(of: #"^Movie [0-9]+% [0-9.]+ / 7\.6 MiB"#, options: .regularExpression) != nil }, "\(dumb.stdout)")
      #expect(lines.last?.hasPrefix("odr: Movie: available and pinned") == true)
      try FileManager.default.removeItem(at: store.appending(path: "blobs/\(sha)"))
      let piped = try await Command.odr(["begin", "Movie"], environment: environment(server))
      #expect(piped.status == 0)
      #expect(!piped.stderr.contains("MiB/s") && !piped.stderr.contains("\r"))
      let quiet = try await onTerminal("xterm", " --quiet")
      #expect(quiet.status == 0 && quiet.stdout.isEmpty, "\(quiet.stdout)")
    }
  }

  @Test func fetchImportsKeysFromAnHTTPCatalog() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await withSUT { server, _ in
      let service = "com.odr.httpfetch.\(UUID().uuidString.prefix(8).lowercased())"
      let result = try await Command.odr(["fetch", "APIKeys", "--service", service], environment: environment(server))
      #expect(result.status == 0, "\(result.stderr)")
      #expect(result.stdout == "added     Maps\nadded     Weather\n")
      #expect(try await Command.keyringValue(service: service, key: "Weather", environment: environment(server)) == "demo-weather-0000-not-a-real-key")
      for name in blobs() {
        let data = try Data(contentsOf: store.appending(path: "blobs/\(name)"))
        #expect(data.range(of: Data("demo-weather-0000".utf8)) == nil, "plaintext left in \(name)")
      }
    }
  }
}
