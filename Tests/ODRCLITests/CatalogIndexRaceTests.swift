import Foundation
import ODRCLITesting
import ODRTesting
import Testing

/// Seed 004's race on disk: processes loading different catalogs at once
/// each record theirs in catalogs.json; none is lost, so each can be served
/// `--offline` afterwards.
@Suite(.tags(.stress), .enabled(if: TestSelection.stress), .timeLimit(.minutes(3))) struct CatalogIndexRaceTests {
  @Test func concurrentLoadsOfDifferentCatalogsAreAllRemembered() async throws {
    let root = FileManager.default.temporaryDirectory.appending(path: "odr-index-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    let count = 12
    let env = ["XDG_CACHE_HOME": root.appending(path: "cache").path, "XDG_STATE_HOME": root.appending(path: "state").path, "PATH": "/usr/bin:/bin"]
    for index in 0..<count {
      let source = root.appending(path: "src\(index)")
      try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
      try Data("file \(index)".utf8).write(to: source.appending(path: "f.txt"))
      try Data(#"{"bundle": "com.example.index\#(index)", "tags": {"T": {"category": "onDemand", "files": ["f.txt"]}}}"#.utf8)
        .write(to: source.appending(path: "tags.json"))
    }
    try await withThrowingTaskGroup(of: Void.self) { group in
      for index in 0..<count {
        group.addTask {
          let source = root.appending(path: "src\(index)"), output = root.appending(path: "pub\(index)")
          _ = try await Command.odr(["pack", source.path, "--output", output.path, "--quiet"], environment: env)
        }
      }
      try await group.waitForAll()
    }
    // All at once: each process reads catalogs.json, adds its entry, writes it back.
    let results = try await Command.exclusively { try await Command.offPool {
      let processes = try (0..<count).map { index -> Process in
        let process = Process()
        process.executableURL = Paths.odr
        process.arguments = ["status", "--catalog", root.appending(path: "pub\(index)").path]
        process.environment = env
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
      }
      return processes.map { $0.waitUntilExit(); return $0.terminationStatus }
    } }
    #expect(results == Array(repeating: 0, count: count))
    for index in 0..<count {
      let offline = try await Command.odr(["status", "--offline", "--catalog", root.appending(path: "pub\(index)").path], environment: env)
      #expect(offline.status == 0, "pub\(index): \(offline.stderr)")
    }
  }
}
