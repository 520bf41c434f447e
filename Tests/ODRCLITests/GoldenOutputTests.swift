import Foundation
import ODRCLITesting
import ODRTesting
import Testing

/// Every command's output and exit code, pinned: the help of each command,
/// then a session on the Demo sample (pack, verify, fetch, begin, status,
/// env, exec, purge…) and its usage errors, on a keyring of its own. A change
/// of wording or exit code fails here until `Golden/commands.txt` is
/// regenerated on purpose: `ODR_UPDATE_GOLDEN=1 scripts/test --filter
/// GoldenOutputTests`, then review the diff.
///
/// Paths, times and durations are replaced by placeholders; values are fake.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct GoldenOutputTests {
  static let golden = Paths.packageRoot.appending(path: "Tests/ODRCLITests/Golden/commands.txt")
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-golden-\(UUID().uuidString)")

  /// The help of every command and subcommand.
  static let helps: [[String]] = [[]] + [
    "fetch", "exec", "env", "http", "url", "url check", "pack", "verify", "publish", "signing-key", "signing-key new",
    "signing-key public", "signing-key export", "signing-key import", "signing-key list", "signing-key delete",
    "identity", "identity new", "identity recipient", "identity export", "identity import", "identity list",
    "identity delete", "prefetch", "begin", "end", "path", "status", "priority", "purge", "set", "get", "read",
    "inject", "list", "delete", "doctor",
  ].map { $0.split(separator: " ").map(String.init) }

  /// A session on the Demo sample, in order: each step may rely on the ones before.
  static let session: [(arguments: [String], input: String?)] = [
    (["pack", "$PKG/resources/Demo", "--output", "$ROOT/pub", "--bundle", "com.example.golden", "--catalog-version", "7", "--plaintext-secrets"], nil),
    (["pack", "$PKG/resources/Demo", "--output", "$ROOT/pub", "--bundle", "com.example.golden", "--catalog-version", "7", "--plaintext-secrets", "--json"], nil),
    (["verify", "$ROOT/pub"], nil),
    (["status"], nil),
    (["status", "--json"], nil),
    (["trust", "show"], nil),
    (["fetch", "APIKeys"], nil),
    (["fetch", "APIKeys"], nil),
    (["fetch", "APIKeys", "--json"], nil),
    (["list", "--service", "com.example.golden"], nil),
    (["list", "--long", "--service", "com.example.golden"], nil),
    (["get", "Weather", "--service", "com.example.golden"], nil),
    (["get", "WEATHER_API_KEY", "--service", "com.example.golden"], nil),
    (["get", "Absent", "--service", "com.example.golden"], nil),
    (["env", "--service", "com.example.golden"], nil),
    (["env", "--format", "dotenv", "--service", "com.example.golden"], nil),
    (["env", "--format", "json", "--service", "com.example.golden"], nil),
    (["exec", "--service", "com.example.golden", "--", "sh", "-c", "test -n \"$WEATHER_API_KEY\" && echo set"], nil),
    (["exec", "--service", "com.example.golden", "--", "sh", "-c", "exit 3"], nil),
    (["set", "Extra", "--service", "com.example.golden"], "golden-extra-value"),
    (["get", "Extra", "--service", "com.example.golden"], nil),
    (["delete", "Extra", "--service", "com.example.golden"], nil),
    (["delete", "Extra", "--service", "com.example.golden"], nil),
    (["delete", "Extra", "Nope", "--service", "com.example.golden"], nil),
    (["begin", "Onboarding", "Level2"], nil),
    (["begin", "Levl2"], nil),
    (["begin", "Level2", "--quiet"], nil),
    (["path", "Level2", "levels/2/level.json"], nil),
    (["path", "Level2", "levels/2/missing.json"], nil),
    (["status"], nil),
    (["priority", "Level2", "0.9"], nil),
    (["end", "Level2"], nil),
    (["end", "Level2"], nil),
    (["purge", "--dry-run"], nil),
    (["purge", "--dry-run", "--json"], nil),
    (["purge", "--all"], nil),
    (["status", "--offline"], nil),
    (["prefetch", "--quiet"], nil),
    (["url", "check", "https://api.example.com/v1?q=a b"], nil),
    (["url", "check", "https://api.example.com/v1", "--json"], nil),
    // Usage errors and refusals.
    (["fecth"], nil),
    (["help", "nope"], nil),
    (["get"], nil),
    (["get", "bad name", "--service", "com.example.golden"], nil),
    (["begin", "NoSuchTag"], nil),
    (["pack", "--version", "4"], nil),
    (["pack", "$PKG/resources/Demo", "--ouput", "$ROOT/elsewhere"], nil),
    (["status", "--jsn"], nil),
    (["purge", "--max-size", "lots"], nil),
    (["env", "--format", "yaml", "--service", "com.example.golden"], nil),
    (["url", "check", "https://a.example/", "--policy", "loose"], nil),
    (["verify", "$ROOT/nowhere"], nil),
    (["status", "--refresh", "--offline"], nil),
    (["publish", "$ROOT/nowhere", "$ROOT/out"], nil),
  ]

  var environment: [String: String] {
    var env = KeyringSession.shared.environment
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    env["ODR_CATALOG"] = root.appending(path: "pub").path
    env["COLUMNS"] = "80"
    env["HOME"] = root.appending(path: "home").path
    for name in ["ODR_SERVICE", "ODR_TRUST", "ODR_MAX_SIZE", "ODR_STORE", "NO_COLOR", "TERM"] { env[name] = nil }
    return env
  }

  // The shared keyring (so the commands run in the test process): the
  // session packs the Demo under a bundle id no other suite uses, and runs
  // no command that lists odr's own private keys.

  @Test func everyCommandSaysWhatItSaidBefore() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    for folder in ["home", "work"] {
      try FileManager.default.createDirectory(at: root.appending(path: folder), withIntermediateDirectories: true)
    }
    let env = environment
    var transcript = ""
    for arguments in Self.helps {
      let (entry, help) = try await record(arguments + ["--help"], input: nil, environment: env)
      transcript += entry
      // At 80 columns no example wraps: each line of an example block is indented, so a copied line is a whole command.
      var inExample = false
      for line in help.stdout.split(separator: "\n", omittingEmptySubsequences: false) {
        if line == "Example:" || line == "Examples:" { inExample = true; continue }
        if line.isEmpty { inExample = false }
        #expect(!inExample || line.hasPrefix("  "), "odr \(arguments.joined(separator: " ")) --help wraps an example at 80 columns: '\(line)'")
      }
    }
    var failures = 0
    for step in Self.session {
      let (entry, result) = try await record(step.arguments, input: step.input, environment: env)
      transcript += entry
      // Every failure is one `odr: …` line on stderr; `odr exec` passes its
      // child's status on and adds nothing to the child's own output.
      guard result.status != 0, step.arguments.first != "exec" else { continue }
      failures += 1
      let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false)
      #expect(lines.count == 2 && lines[0].hasPrefix("odr: ") && lines[1].isEmpty,
              "odr \(step.arguments.joined(separator: " ")) (exit \(result.status)) printed \(lines.count - 1) lines on stderr:\n\(result.stderr)")
    }
    #expect(failures >= 20)
    if ProcessInfo.processInfo.environment["ODR_UPDATE_GOLDEN"] == "1" {
      try FileManager.default.createDirectory(at: Self.golden.deletingLastPathComponent(), withIntermediateDirectories: true)
      try transcript.write(to: Self.golden, atomically: true, encoding: .utf8)
    }
    let expected = try String(contentsOf: Self.golden, encoding: .utf8)
    let (got, want) = (transcript.split(separator: "\n", omittingEmptySubsequences: false), expected.split(separator: "\n", omittingEmptySubsequences: false))
    let first = zip(got, want).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(got.count, want.count)
    #expect(transcript == expected, """
      first difference at line \(first + 1):
        now:    \(first < got.count ? String(got[first]) : "<end>")
        before: \(first < want.count ? String(want[first]) : "<end>")
      """)
  }

  /// One command's entry: the command line, its exit code, stdout, stderr;
  /// and the command's result itself.
  func record(_ arguments: [String], input: String?, environment: [String: String]) async throws -> (entry: String, result: Command.Result) {
    let arguments = arguments.map { $0.replacingOccurrences(of: "$PKG", with: Paths.packageRoot.path).replacingOccurrences(of: "$ROOT", with: root.path) }
    let result = try await Command.odr(arguments, input: input, environment: environment, in: root.appending(path: "work"))
    let line = (["odr"] + arguments).map { $0.contains(" ") || $0.isEmpty ? "'\($0)'" : $0 }.joined(separator: " ")
    let entry = normalized("""
      $ \(line)
      [exit \(result.status)]
      --- stdout
      \(result.stdout)
      --- stderr
      \(result.stderr)

      """)
    return (entry, result)
  }

  /// `text` with what changes from run to run replaced by placeholders.
  func normalized(_ text: String) -> String {
    var text = text
      .replacingOccurrences(of: root.path, with: "$ROOT")
      .replacingOccurrences(of: Paths.packageRoot.path, with: "$PKG")
    let patterns: [(String, String)] = [
      (#"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"#, "<TIME>"),
      (#"\b\d+(\.\d+)? ?(ms|s)\b"#, "<DURATION>"),
      (#"in \d+(\.\d+)? seconds?"#, "in <DURATION>"),
      (#"\b([0-9]+ (days?|hours?|minutes?)|less than a minute) ago\b"#, "<AGO>"),
      (#"\bpid \d+\b"#, "pid <PID>"),
      (#"(by |\t|, )\d+ \(odrPackageTests\)"#, "$1<PID> (odrPackageTests)"),
    ]
    for (pattern, replacement) in patterns {
      text = text.replacingOccurrences(of: pattern, with: replacement, options: .regularExpression)
    }
    return text
  }
}
