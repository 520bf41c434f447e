import Foundation
import ODRTesting
import Testing

/// The README's examples marked ```` ```sh runnable ```` run as written, in
/// order, against resources/Demo, with the built odr on PATH, on a keyring
/// of their own (scripts/with-keyring), from the package's folder.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct ReadmeExamplesTests {
  @Test func theRunnableExamplesRunAsWritten() async throws {
    let readme = try String(contentsOf: Paths.packageRoot.appending(path: "README.md"), encoding: .utf8)
    var blocks: [String] = []
    var current: [String]?
    for line in readme.components(separatedBy: "\n") {
      if current == nil, line == "```sh runnable" { current = [] } else if current != nil, line == "```" {
        blocks.append(current!.joined(separator: "\n"))
        current = nil
      } else { current?.append(line) }
    }
    #expect(blocks.count >= 5)
    let root = FileManager.default.temporaryDirectory.appending(path: "odr-readme-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    let script = "set -euo pipefail\n" + blocks.joined(separator: "\n").replacingOccurrences(of: "/tmp/demo-catalog", with: root.appending(path: "demo-catalog").path)
      .replacingOccurrences(of: "/tmp/demo-resources", with: root.appending(path: "demo-resources").path)
    try script.write(to: root.appending(path: "tour.sh"), atomically: true, encoding: .utf8)
    var env = ProcessInfo.processInfo.environment
    env["PATH"] = Paths.odr.deletingLastPathComponent().path + ":" + (env["PATH"] ?? "/usr/bin:/bin")
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    for name in ["ODR_CATALOG", "ODR_SERVICE", "ODR_TRUST", "ODR_MAX_SIZE"] { env[name] = nil }
    let environment = env
    let result = try await Command.run("/bin/sh", ["-c", "cd \"$0\" && exec scripts/with-keyring bash \"$1\"", Paths.packageRoot.path, root.appending(path: "tour.sh").path],
                                       environment: environment)
    #expect(result.status == 0, "\(result.output.suffix(1500))")
    #expect(result.stdout.hasPrefix("k-123"))                                // odr get of what the first block stored
    #expect(result.stdout.contains("/cache/odr/com.example.demo/blobs/"))   // odr path
    #expect(result.stdout.contains("demo-weather-0000-not-a-real-key"))      // secret-tool reads what odr fetched
    #expect(result.stdout.contains("k-456"))                                 // odr reads what secret-tool stored
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
                   "ODRTrust", "ODRTrustState", "ODRAge", "ODRURL", "ODRBase"] {
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
