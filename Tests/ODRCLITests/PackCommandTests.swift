import Foundation
import ODRCLITesting
import ODRTesting
import Testing

/// `odr pack` on the bundled sample, run as a publisher would.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct PackCommandTests {
  let output = FileManager.default.temporaryDirectory.appending(path: "odr-pack-cli-\(UUID().uuidString)")
  var sample: String { Paths.packageRoot.appending(path: "resources/Demo").path }

  @Test func packsTheDemoSampleIdenticallyTwice() async throws {
    defer { try? FileManager.default.removeItem(at: output) }
    let first = try await Command.odr(["pack", sample, "--output", output.path, "--json", "--plaintext-secrets"])
    #expect(first.status == 0, "\(first.stderr)")
    let summary = try JSONSerialization.jsonObject(with: Data(first.stdout.utf8)) as? [String: Any]
    #expect(summary?["bundle"] as? String == "com.example.demo")
    let tags = (summary?["tags"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
    #expect(tags == ["APIKeys", "Level2", "Onboarding"])
    let catalog = try Data(contentsOf: output.appending(path: "catalog.json"))
    try FileManager.default.removeItem(at: output)
    #expect(try await Command.odr(["pack", sample, "--output", output.path, "--quiet", "--plaintext-secrets"]).status == 0)
    #expect(try Data(contentsOf: output.appending(path: "catalog.json")) == catalog)
  }

  @Test func missingSourceExitsThree() async throws {
    let result = try await Command.odr(["pack", "/nonexistent/odr-src", "--output", output.path])
    #expect(result.status == 3)
    #expect(result.stderr.contains("No tags.json"))
  }
}
