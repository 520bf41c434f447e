import Foundation
import ODRTesting
import Testing

/// The README's examples marked ```` ```sh runnable ```` run as written, in
/// order, against resources/Demo, with the built odr on PATH, on a keyring
/// of their own (scripts/with-keyring), from the package's folder.
@Suite(.timeLimit(.minutes(2))) struct ReadmeExamplesTests {
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
    env["WEATHER_KEY"] = "readme-weather-key"
    env["KEY"] = "readme-secret-tool-key"
    for name in ["ODR_CATALOG", "ODR_SERVICE", "ODR_TRUST", "ODR_MAX_SIZE"] { env[name] = nil }
    let environment = env
    let result = try await Command.run("/bin/sh", ["-c", "cd \"$0\" && exec scripts/with-keyring bash \"$1\"", Paths.packageRoot.path, root.appending(path: "tour.sh").path],
                                       environment: environment)
    #expect(result.status == 0, "\(result.output.suffix(1500))")
    #expect(result.stdout.contains("readme-weather-key"))                    // odr get
    #expect(result.stdout.contains("/cache/odr/com.example.demo/blobs/"))   // odr path
    #expect(result.stdout.contains("demo-weather-0000-not-a-real-key"))      // secret-tool reads what odr fetched
    #expect(result.stdout.contains("readme-secret-tool-key"))                // odr reads what secret-tool stored
  }
}
