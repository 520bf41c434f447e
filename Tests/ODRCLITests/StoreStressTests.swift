import Foundation
import ODRCLITesting
import ODRTesting
import Testing

/// 16 processes begin, end and purge overlapping tags at random, 24
/// commands each (`ODR_STRESS_ROUNDS=N` for more); the store must come out
/// consistent.
@Suite(.tags(.stress), .enabled(if: TestSelection.stress), .timeLimit(.minutes(2))) struct StoreStressTests {
  @Test func sixteenProcessesOf30sLeaveAConsistentStore() async throws {
    let root = FileManager.default.temporaryDirectory.appending(path: "odr-stress-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    let source = root.appending(path: "src")
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    // Four tags over four blobs, each blob shared by two tags.
    for (index, name) in ["w", "x", "y", "z"].enumerated() {
      var bytes = Data(count: 256 << 10)
      bytes.withUnsafeMutableBytes { for i in stride(from: 0, to: $0.count, by: 64) { $0[i] = UInt8(index * 50 + (i / 64) % 50) } }
      try bytes.write(to: source.appending(path: "\(name).bin"))
    }
    try Data("""
      { "bundle": "com.example.stress", "tags": {
        "A": { "category": "onDemand", "files": ["x.bin", "y.bin"] },
        "B": { "category": "onDemand", "preservationPriority": 0.2, "files": ["y.bin", "z.bin"] },
        "C": { "category": "onDemand", "files": ["z.bin", "w.bin"] },
        "D": { "category": "onDemand", "preservationPriority": 0.8, "files": ["w.bin", "x.bin"] } } }
      """.utf8).write(to: source.appending(path: "tags.json"))
    var env = ProcessInfo.processInfo.environment
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    env["ODR_CATALOG"] = root.appending(path: "pub").path
    env["ODR"] = Paths.odr.path
    try #require(try await Command.odr(["pack", source.path, "--output", root.appending(path: "pub").path, "--quiet", "--plaintext-secrets"], environment: env).status == 0)

    // Each worker: begin (under a budget: 8 = over budget is fine), end, purge.
    let worker = #"""
      tags=(A B C D); runs=0
      for _ in $(seq "$ROUNDS"); do
        r=$((RANDOM % 10)); t1=${tags[RANDOM % 4]}; t2=${tags[RANDOM % 4]}
        if [ $r -lt 5 ]; then "$ODR" begin $t1 $t2 --quiet --max-size 900K 2>>"$LOG"; s=$?; [ $s -eq 0 ] || [ $s -eq 8 ] || { echo "begin exited $s"; exit 1; }
        elif [ $r -lt 8 ]; then "$ODR" end $t1 2>/dev/null || { echo "end exited $?"; exit 1; }
        elif [ $r -lt 9 ]; then "$ODR" purge --all >/dev/null 2>>"$LOG" || { echo "purge exited $?"; exit 1; }
        else "$ODR" purge --max-size 600K >/dev/null 2>>"$LOG" || { echo "purge --max-size exited $?"; exit 1; }
        fi
        runs=$((runs + 1))
      done
      echo "ok $runs"
      """#
    env["LOG"] = root.appending(path: "stress.log").path
    env["ROUNDS"] = ProcessInfo.processInfo.environment["ODR_STRESS_ROUNDS"] ?? "24"
    let workerEnv = env
    // Seconds of waiting on pipes: on a thread of its own, not a cooperative one.
    let (commands, failures) = try await Command.exclusively { try await Command.offPool { () throws -> (Int, [String]) in
      let workers = try (0..<16).map { _ in
        let process = Process()
        process.executableURL = URL(filePath: "/bin/bash")
        process.arguments = ["-c", worker]
        process.environment = workerEnv
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        return (process, out)
      }
      var commands = 0
      var failures: [String] = []
      for (process, out) in workers {
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        if process.terminationStatus != 0 { failures.append(text) }
        commands += Int(text.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
      }
      return (commands, failures)
    } }
    #expect(failures.isEmpty, "\(failures) \((try? String(contentsOf: root.appending(path: "stress.log"), encoding: .utf8))?.suffix(500) ?? "")")
    #expect(commands == 16 * (Int(workerEnv["ROUNDS"]!) ?? 0), "only \(commands) commands ran")

    // Every blob re-hashes to its name, nothing is half-written, and the
    // workers' pins died with them.
    let verify = try await Command.odr(["status", "--verify", "--json"], environment: env)
    #expect(verify.status == 0, "\(verify.stderr)")
    let report = try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any]
    #expect(((report?["verification"] as? [String: Any])?["damaged"] as? [String]) == [])
    #expect((report?["tags"] as? [[String: Any]])?.allSatisfy { $0["pins"] as? Int == 0 } == true)
    let partial = root.appending(path: "cache/odr/com.example.stress/partial")
    #expect(((try? FileManager.default.contentsOfDirectory(atPath: partial.path)) ?? []).isEmpty)
    // And it still works: a tag can be begun and read.
    #expect(try await Command.odr(["begin", "A", "B", "C", "D", "--quiet"], environment: env).status == 0)
    #expect(try await Command.odr(["status", "--verify"], environment: env).status == 0)
  }
}
