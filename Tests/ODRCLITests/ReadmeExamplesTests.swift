import Foundation
import ODRAge
import ODRCLITesting
import ODRTesting
import ODRSigning
import Testing

/// The README's examples marked ```` ```sh runnable ```` run as written, in
/// order, against resources/Demo, with the built odr on PATH, on a keyring
/// of their own (scripts/with-keyring), from the package's folder.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct ReadmeExamplesTests {
  @Test func theRunnableExamplesRunAsWritten() async throws {
    let root = FileManager.default.temporaryDirectory.appending(path: "odr-readme-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(at: root.appending(path: "resources"), withDestinationURL: Paths.packageRoot.appending(path: "resources"))
    let written = try await Command.run(Paths.packageRoot.appending(path: "scripts/lib/readme-tour").path, [root.path])
    try #require(written.status == 0, "\(written.stderr)")
    var env = ProcessInfo.processInfo.environment
    env["PATH"] = Paths.odr.deletingLastPathComponent().path + ":" + (env["PATH"] ?? "/usr/bin:/bin")
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    for name in ["ODR_CATALOG", "ODR_SERVICE", "ODR_TRUST", "ODR_MAX_SIZE"] { env[name] = nil }
    let environment = env
    let withKeyring = Paths.packageRoot.appending(path: "scripts/with-keyring").path
    let result = try await Command.run("/bin/sh", ["-c", "cd \"$0\" && exec \"$1\" bash tour.sh", root.path, withKeyring],
                                       environment: environment)
    #expect(result.status == 0, "\(result.output.suffix(1500))")
    #expect(result.stdout.hasPrefix("k-123"))                                // odr get of what the first block stored
    #expect(result.stdout.contains("/cache/odr/com.example.trial/blobs/"))  // odr path of the trial catalog
    #expect(result.stdout.contains("*** *** debug"))                         // odr:// references resolved, masked
    #expect(result.stdout.contains("k-456"))                                 // odr reads what secret-tool stored
    #expect(result.stderr.contains("refusing a downgrade") == false)         // the trial never meets the signed demo's trust
  }

  /// The README's systemd unit, as systemd runs it for a system user whose
  /// home is `/nonexistent`: its `Environment=` lines with `%S`, `%C` and
  /// `%d` expanded to the folders its `StateDirectory=`, `CacheDirectory=`
  /// and `LoadCredential=` make, its `ExecStart=` with this build's odr, a
  /// catalog of our own and a command that exits. Without the folders, odr
  /// says what it could not make and which lines to add.
  @Test func theSystemdUnitRunsAsASystemUser() async throws {
    try #require(getuid() != 0, "the untagged group runs as an ordinary user (scripts/test): root can make /nonexistent")
    let readme = try String(contentsOf: Paths.packageRoot.appending(path: "README.md"), encoding: .utf8)
    let unit = try #require(readme.components(separatedBy: "```ini\n").dropFirst().first?.components(separatedBy: "```").first)
    let lines = unit.split(separator: "\n").map(String.init)
    func values(_ key: String) -> [String] { lines.filter { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) } }
    let root = FileManager.default.temporaryDirectory.appending(path: "odr-unit-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    let (state, cache, credentials) = (root.appending(path: "lib"), root.appending(path: "cache"), root.appending(path: "credentials"))
    let folders = [state, cache] + values("StateDirectory").map { state.appending(path: $0) } + values("CacheDirectory").map { cache.appending(path: $0) }
    for folder in folders {
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }
    try FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: true)

    // The publisher's catalog, encrypted to the service's identity and signed.
    let (identity, key) = (AgeIdentity(), SigningKey())
    let credential = try #require(values("LoadCredential").first?.split(separator: ":").first.map(String.init))
    try Data(identity.fileText.utf8).write(to: credentials.appending(path: credential))
    let source = root.appending(path: "src"), published = root.appending(path: "pub")
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    try Data(#"{"bundle": "com.example.unit", "tags": {"APIKeys": {"category": "prefetch", "secrets": true, "files": ["APIKeys.json"]}}}"#.utf8)
      .write(to: source.appending(path: "tags.json"))
    try Data(#"{"Weather": "unit-weather"}"#.utf8).write(to: source.appending(path: "APIKeys.json"))
    let pack = try await Command.odr(["pack", source.path, "--output", published.path, "--recipient", identity.recipient.description, "--quiet"],
                                     environment: ["ODR_SIGNING_KEY": key.secretKeyString, "PATH": "/usr/bin:/bin"])
    try #require(pack.status == 0, "\(pack.stderr)")

    func expand(_ text: String) -> String {
      text.replacingOccurrences(of: "%S", with: state.path).replacingOccurrences(of: "%C", with: cache.path)
        .replacingOccurrences(of: "%d", with: credentials.path)
    }
    var environment = ["HOME": "/nonexistent", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
    for assignment in values("Environment").flatMap({ $0.split(separator: " ") }) {
      let parts = assignment.split(separator: "=", maxSplits: 1).map(String.init)
      environment[parts[0]] = expand(parts[1])
    }
    #expect(environment["XDG_STATE_HOME"]?.hasPrefix(state.path + "/") == true && environment["XDG_CACHE_HOME"]?.hasPrefix(cache.path + "/") == true,
            "the unit points odr's folders at its StateDirectory= and CacheDirectory=: \(unit)")
    environment["ODR_CATALOG"] = published.path
    environment["ODR_TRUST"] = key.verifyingKey.description
    var exec = try #require(values("ExecStart").first).split(separator: " ").map { expand(String($0)) }
    exec = Array(exec.dropFirst().prefix { $0 != "--" }) + ["--", "sh", "-c", #"test "$WEATHER" = unit-weather"#]
    let served = try await Command.odr(exec, environment: environment)
    #expect(served.status == 0, "\(served.stderr)")
    #expect(FileManager.default.fileExists(atPath: state.appending(path: "odr-demo/odr/com.example.unit").path), "trust state kept in StateDirectory=")

    // Without the two folders: what could not be made, what for, what to add.
    for name in ["XDG_STATE_HOME", "XDG_CACHE_HOME"] { environment[name] = nil }
    let homeless = try await Command.odr(exec, environment: environment)
    #expect(homeless.status == 1, "\(homeless.stderr)")
    #expect(homeless.stderr.contains("Cannot make the folder of") && homeless.stderr.contains("/nonexistent")
            && homeless.stderr.contains("StateDirectory="), "\(homeless.stderr)")
  }

  /// Every ```` ```swift ```` sample of the README, docs/, the DocC articles
  /// and the doc comments of what an app links is in the outside package's
  /// Snippets target (Tests/Fixtures/OutsideApp), which scripts/checks/app
  /// compiles without warnings: a sample that no longer compiles, or is
  /// not there, fails.
  @Test func everySwiftSampleIsCompiledByTheOutsideApp() throws {
    let root = Paths.packageRoot
    let files = FileManager.default
    var texts: [(String, String)] = []
    func add(_ path: String, docComments: Bool = false) throws {
      var text = try String(contentsOf: root.appending(path: path), encoding: .utf8)
      if docComments {
        text = text.components(separatedBy: "\n").compactMap { line in
          let trimmed = line.drop { $0 == " " }
          return trimmed.hasPrefix("///") ? String(trimmed.dropFirst(3).drop { $0 == " " }.isEmpty ? "" : trimmed.dropFirst(4)) : nil
        }.joined(separator: "\n")
      }
      texts.append((path, text))
    }
    try add("README.md")
    for folder in ["docs"] + (try files.contentsOfDirectory(atPath: root.appending(path: "Sources").path)).map({ "Sources/\($0)/Documentation.docc" }) {
      for name in (try? files.contentsOfDirectory(atPath: root.appending(path: folder).path)) ?? [] where name.hasSuffix(".md") {
        try add("\(folder)/\(name)")
      }
    }
    // Every module whose names ODRKit exports (Sources/ODRKit/Exports.swift).
    for module in ["ODRKit", "ODRKeys", "ODRNetworking", "ODRConfiguration", "ODRResources", "ODRCatalog", "ODRTransports", "ODRKeyring",
                   "ODRSigning", "ODRTrust", "ODRAge", "ODRURL", "ODRBase"] {
      for name in try files.contentsOfDirectory(atPath: root.appending(path: "Sources/\(module)").path) where name.hasSuffix(".swift") {
        try add("Sources/\(module)/\(name)", docComments: true)
      }
    }
    func lines(_ text: some StringProtocol) -> [String] {
      text.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("import ") }
    }
    let compiled = lines(try String(contentsOf: root.appending(path: "Tests/Fixtures/OutsideApp/Sources/Snippets/Snippets.swift"), encoding: .utf8))
    var samples = 0
    for (path, text) in texts {
      var current: [String]?
      for line in text.components(separatedBy: "\n") {
        if current == nil, line.trimmingCharacters(in: .whitespaces) == "```swift" { current = [] } else if current != nil, line.trimmingCharacters(in: .whitespaces) == "```" {
          let sample = lines(current!.joined(separator: "\n"))
          current = nil
          guard sample.first != "// Package.swift" else { continue }  // a manifest: the fixture's own Package.swift
          samples += 1
          let found = compiled.indices.contains { start in start + sample.count <= compiled.count && Array(compiled[start..<start + sample.count]) == sample }
          #expect(found, "\(path): this sample is not in Tests/Fixtures/OutsideApp/Sources/Snippets/Snippets.swift, so nothing compiles it:\n\(sample.joined(separator: "\n"))")
        } else { current?.append(line) }
      }
    }
    #expect(samples >= 12)
  }
}
