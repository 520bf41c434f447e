import ArgumentParser
import Foundation
@testable import ODRCommandLine
import ODRCLITesting
import ODRTesting
import Testing

/// What a user meets first: help that reads well at 80 columns, a
/// suggestion for a mistyped command, and odr.json problems named by line.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct CLIPolishTests {
  func odr(_ arguments: [String], in folder: URL? = nil, environment: [String: String] = ["COLUMNS": "80", "PATH": "/usr/bin:/bin"]) async throws -> Command.Result {
    try await Command.odr(arguments, environment: environment, in: folder)
  }

  /// Lines that end a paragraph early: one or two words between two longer
  /// lines of the same paragraph (what a hard-wrapped text re-wrapped by
  /// ArgumentParser looks like).
  static func raggedLines(_ text: String) -> [String] {
    let lines = text.components(separatedBy: "\n")
    func indent(_ line: String) -> Int { line.prefix { $0 == " " }.count }
    return lines.indices.dropFirst().dropLast().compactMap { i in
      let (before, line, after) = (lines[i - 1], lines[i], lines[i + 1])
      guard !line.trimmingCharacters(in: .whitespaces).isEmpty, line.split(separator: " ").count <= 2,
            !before.trimmingCharacters(in: .whitespaces).isEmpty, !after.trimmingCharacters(in: .whitespaces).isEmpty,
            indent(before) == indent(line), indent(line) == indent(after), before.count > 50 else { return nil }
      return "\(before)\n\(line)\n\(after)"
    }
  }

  @Test func theCheckFindsAHardWrappedParagraph() {
    let ragged = """
      Keys live in the Secret Service keyring (gnome-keyring, KeePassXC, …), one item
      per
      key with the attributes `service` (the bundle id) and `key` (the key name).
      """
    #expect(Self.raggedLines(ragged).count == 1)
  }

  /// In-process, every command of the tree (the golden test pins the
  /// binary's help as printed).
  @Test func everyHelpReadsWellAtEightyColumns() {
    func tree(_ command: any ParsableCommand.Type) -> [any ParsableCommand.Type] {
      [command] + command.configuration.subcommands.flatMap(tree)
    }
    let commands = tree(ODR.self)
    #expect(commands.count > 30)
    var problems: [String] = []
    for command in commands {
      let help = ODR.helpMessage(for: command, columns: 80)
      let name = command._commandName
      // (ArgumentParser never wraps the USAGE line.)
      #expect(help.split(separator: "\n").allSatisfy { $0.count <= 80 || $0.hasPrefix("USAGE:") }, "odr \(name) --help is wider than 80 columns")
      problems += Self.raggedLines(help).map { "odr \(name) --help:\n\($0)" }
    }
    #expect(problems.isEmpty, "\(problems.joined(separator: "\n\n"))")
  }

  /// `--json` and `--quiet` mean the same in every command that reports a
  /// result (OutputOptions): quiet prints nothing on success and the usual
  /// report when something failed; --json wins over --quiet.
  @Test func quietPrintsNothingButFailuresAndJSONWins() async throws {
    let good = try await odr(["url", "check", "--quiet", "https://api.example.com/v1"])
    #expect(good.status == 0 && good.stdout.isEmpty && good.stderr.isEmpty)
    let bad = try await odr(["url", "check", "--quiet", "https://api.example.com/a b"])
    #expect(bad.status == 1 && bad.stdout.contains("*consistent  reject") && bad.stderr.contains("rejected under the consistent policy"))
    let json = try await odr(["url", "check", "--quiet", "--json", "https://api.example.com/v1"])
    #expect(json.status == 0)
    #expect(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) is [Any])

    let root = FileManager.default.temporaryDirectory.appending(path: "odr-quiet-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    let published = root.appending(path: "pub").path
    let pack = try await odr(["pack", Paths.packageRoot.appending(path: "resources/Demo").path, "--output", published, "--plaintext-secrets", "--quiet"])
    #expect(pack.status == 0 && pack.stdout.isEmpty && pack.stderr.isEmpty, "\(pack.stderr)")
    let status = try await odr(["status", "--catalog", published, "--verify", "--quiet"],
                               environment: ["XDG_CACHE_HOME": root.appending(path: "cache").path, "XDG_STATE_HOME": root.appending(path: "state").path])
    #expect(status.status == 0 && status.stdout.isEmpty && status.stderr.isEmpty, "\(status.stderr)")
    // Unsigned, secrets in plaintext: verify fails and says why, quiet or not.
    let problems = try await odr(["verify", published, "--quiet"])
    #expect(problems.status == 4 && problems.stdout.contains("PROBLEM: catalog.json is not signed") && problems.stderr.contains("2 problems"))
  }

  @Test func anUnreadableStandardInputIsAnErrorNotAShortValue() async throws {
    // A read error (here EISDIR: stdin is a folder) used to end the input early.
    for (command, what) in [("set K --store kernel --service com.example.stdin", "the value"), ("http POST http://127.0.0.1:9/x -d -", "the body")] {
      let result = try await Command.run("/bin/sh", ["-c", "exec \"$0\" \(command) < /", Paths.odr.path])
      #expect(result.status == 1, "\(command): \(result.stderr)")
      #expect(result.stderr == "odr: Cannot read \(what) from standard input (Is a directory); nothing was used. Give it on a pipe or from a file (< FILE).\n", "\(result.stderr)")
    }
  }

  /// Messages that used to send the user the wrong way (issue 42).
  @Test func mistakesAreToldWhatTheyAreAndWhereToGo() async throws {
    let http = try await odr(["http", "GET"])
    #expect(http.status == 2 && http.stderr.contains("No URL: `odr http GET URL`"), "\(http.stderr)")
    // A signing key's name mistyped: the closest one kept, not `odr set`.
    let env = KeyringSession.shared.environment
    let name = "release-\(UUID().uuidString.prefix(8).lowercased())"
    #expect(try await Command.odr(["signing-key", "new", name], environment: env).status == 0)
    defer { Command.odrInBackground(["signing-key", "delete", name], environment: env) }
    let typo = String(name.dropLast())
    let pack = try await Command.odr(["pack", Paths.packageRoot.appending(path: "resources/Demo").path, "--output", "/nonexistent/odr-out",
                                      "--plaintext-secrets", "--sign", typo], environment: env)
    #expect(pack.status == 3 && pack.stderr.contains("No signing key '\(typo)'") && pack.stderr.contains("Did you mean '\(name)'?"), "\(pack.stderr)")
    #expect(!pack.stderr.contains("odr set"))
  }

  @Test func anUnknownCommandIsAUsageErrorWithASuggestion() async throws {
    let typo = try await odr(["fecth", "APIKeys"])
    #expect(typo.status == 2)
    #expect(typo.stderr == "odr: 'fecth' is not an odr command. Did you mean 'fetch'? (`odr --help` lists them.)\n")
    let help = try await odr(["help", "nope"])
    #expect(help.status == 2)
    #expect(help.stderr.contains("'nope' is not an odr command") && help.stdout.isEmpty)
    #expect(try await odr(["help", "fetch"]).status == 0)
    #expect(try await odr(["stat"]).stderr.contains("Did you mean 'status'?"))
    // Below a command group too.
    let nested = try await odr(["identity", "nwe", "laptop"])
    #expect(nested.status == 2 && nested.stderr == "odr: 'nwe' is not a subcommand of odr identity. Did you mean 'new'? (`odr identity --help` lists them.)\n", "\(nested.stderr)")
    #expect(try await odr(["trust", "shwo"]).stderr.contains("Did you mean 'show'?"))
  }

  @Test func odrJSONIsFoundAboveAndReadStrictly() async throws {
    let root = FileManager.default.temporaryDirectory.appending(path: "odr-config-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    let deep = root.appending(path: "repo/app/src")
    try FileManager.default.createDirectory(at: deep, withIntermediateDirectories: true)
    try FileManager.default.createDirectory(at: root.appending(path: "repo/.git"), withIntermediateDirectories: true)
    let file = root.appending(path: "repo/odr.json")
    let env = ["COLUMNS": "80", "PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": root.appending(path: "cache").path, "XDG_STATE_HOME": root.appending(path: "state").path]

    // Found two folders up, inert until adopted; then its catalog is the one used.
    try #"{"catalog": "\#(root.path)/missing-catalog"}"#.write(to: file, atomically: true, encoding: .utf8)
    let inert = try await odr(["status"], in: deep, environment: env)
    #expect(inert.status == 2 && inert.stderr.contains("\(file.path) is not adopted"), "\(inert.stderr)")
    // A key command looking for the catalog's bundle says why too.
    let noService = try await odr(["get", "Weather"], in: deep, environment: env)
    #expect(noService.status == 2 && noService.stderr.contains("No service") && noService.stderr.contains("\(file.path) is not adopted"), "\(noService.stderr)")
    let adopted = try await odr(["trust", "adopt"], in: deep, environment: env)
    #expect(adopted.status == 0 && adopted.stderr.contains("adopted \(file.path) (catalog \(root.path)/missing-catalog)"), "\(adopted.stderr)")
    let found = try await odr(["status"], in: deep, environment: env)
    #expect(found.status == 3 && found.stderr.contains("missing-catalog"), "\(found.stderr)")
    // Writable by others: ignored, and never adopted.
    chmod(file.path, 0o666)
    let open = try await odr(["status"], in: deep, environment: env)
    #expect(open.status == 2 && open.stderr.contains("others may write to it"), "\(open.stderr)")
    #expect(try await odr(["trust", "adopt"], in: deep, environment: env).status == 2)
    chmod(file.path, 0o644)
    // Changed since it was adopted: inert again until adopted again.
    try #"{"catalog": "\#(root.path)/other-catalog"}"#.write(to: file, atomically: true, encoding: .utf8)
    let changed = try await odr(["status"], in: deep, environment: env)
    #expect(changed.status == 2 && changed.stderr.contains("not adopted in its current form"), "\(changed.stderr)")

    let cases: [(String, String)] = [
      ("{\n  \"catalog\": \"x\",\n  \"maxSise\": \"5M\"\n}\n", "\(file.path):3:3: unknown key \"maxSise\". Did you mean \"maxSize\"?"),
      ("{\n  \"catalog\": \"x\",\n  oops\n}\n", "\(file.path):3:3: expected a key in double quotes."),
      ("{\"catalog\": \"x\",}", "\(file.path):1:17: expected a key in double quotes."),
      ("{\"catalog\": 5}", "\(file.path):1:2: \"catalog\" should be a string or a list of strings."),
      ("{\"catalog\": \"x\", \"auth\": {\"key\": \"K\", \"servise\": \"s\"}}", "unknown key \"servise\" in \"auth\". Did you mean \"service\"?"),
      ("[\"x\"]", "odr.json holds one JSON object"),
    ]
    for (text, message) in cases {
      try text.write(to: file, atomically: true, encoding: .utf8)
      let result = try await odr(["status"], in: deep, environment: env)
      #expect(result.status == 2, "\(text)")
      #expect(result.stderr.contains(message), "\(text) -> \(result.stderr)")
    }
    // Not above a repository's root.
    try FileManager.default.moveItem(at: file, to: root.appending(path: "odr.json"))
    let none = try await odr(["status"], in: deep, environment: env)
    #expect(none.status == 2 && none.stderr.contains("No catalog"), "\(none.stderr)")
  }

  /// Messages a daily user meets (issue 28): an empty list says so on
  /// stderr (a pipe's stdout gets nothing), a missing identity is named as one, bad
  /// dotenv input is a usage error (exit 2).
  @Test func emptyListsMissingIdentitiesAndBadDotenvSayWhatHappened() async throws {
    let root = FileManager.default.temporaryDirectory.appending(path: "odr-msg-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    let env = KeyringSession.shared.environment
    let service = "com.example.empty.\(UUID().uuidString.prefix(8).lowercased())"
    // Piped: stdout (the lines) empty, the note on stderr; --long adds no header over nothing.
    for long in [[], ["--long"]] {
      let piped = try await Command.odr(["list", "--service", service] + long, environment: env)
      #expect(piped.status == 0 && piped.stdout.isEmpty && piped.stderr.hasPrefix("odr: no keys in \(service) in the keyring"), "\(piped.output)")
    }
    let terminal = try await Command.run("/usr/bin/script", ["-qec", "\(Paths.odr.path) list --service \(service)", "/dev/null"], environment: env)
    #expect(terminal.status == 0 && terminal.stdout.contains("odr: no keys in \(service)"), "\(terminal.stdout)")

    let missing = try await Command.odr(["identity", "recipient", "nope-\(UUID().uuidString.prefix(8))"], environment: env)
    #expect(missing.status == 3 && missing.stderr.contains("No identity 'nope-") && missing.stderr.contains("`odr identity list`"), "\(missing.stderr)")
    #expect(!missing.stderr.contains("odr set"))

    let dotenv = root.appending(path: "bad.env")
    try Data("A=\"never closed\n".utf8).write(to: dotenv)
    let bad = try await Command.odr(["exec", "--env-file", dotenv.path, "--service", service, "--", "/bin/true"], environment: env)
    #expect(bad.status == 2 && bad.stderr.contains("bad.env:1:3:"), "\(bad.stderr)")
  }

  @Test func listLongShowsMetadataNeverValuesAndGetWritesAPrivateFile() async throws {
    let root = FileManager.default.temporaryDirectory.appending(path: "odr-list-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    let service = "com.example.polish.\(UUID().uuidString.prefix(8))"
    let value = "k-\(UUID().uuidString)"
    let document = #"{"keys": {"Weather": {"value": "\#(value)", "env": "WEATHER_API_KEY", "header": "X-Api-Key", "hosts": ["api.weather.example"]}}}"#
    let env = KeyringSession.shared.environment
    // A pack with one extended-form key, fetched into the keyring.
    try FileManager.default.createDirectory(at: root.appending(path: "src"), withIntermediateDirectories: true)
    try document.write(to: root.appending(path: "src/APIKeys.json"), atomically: true, encoding: .utf8)
    try #"{"bundle": "\#(service)", "tags": {"APIKeys": {"category": "prefetch", "secrets": true, "files": ["APIKeys.json"]}}}"#
      .write(to: root.appending(path: "src/tags.json"), atomically: true, encoding: .utf8)
    var packEnv = env
    packEnv["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    packEnv["XDG_STATE_HOME"] = root.appending(path: "state").path
    #expect(try await Command.odr(["pack", root.appending(path: "src").path, "--output", root.appending(path: "pub").path, "--plaintext-secrets", "--quiet"], environment: packEnv).status == 0)
    #expect(try await Command.odr(["fetch", "APIKeys", "--catalog", root.appending(path: "pub").path, "--quiet"], environment: packEnv).status == 0)
    defer { Command.odrInBackground(["delete", "--all", "--service", service], environment: env) }

    let long = try await Command.odr(["list", "--long", "--service", service], environment: env)
    #expect(long.status == 0, "\(long.stderr)")
    // Piped: tab-separated, no header ("-" for unset), for cut and awk.
    #expect(long.stdout == "Weather\tWEATHER_API_KEY\tX-Api-Key\t-\t-\t-\tapi.weather.example\t-\tcatalog\n")
    let json = try await Command.odr(["list", "--long", "--json", "--service", service], environment: env)
    #expect(json.stdout.contains(#""query" : null"#) && json.stdout.contains(#""env" : "WEATHER_API_KEY""#))
    #expect(!long.output.contains(value) && !json.output.contains(value))

    let file = root.appending(path: "weather.key")
    #expect(try await Command.odr(["get", "Weather", "--service", service, "--out-file", file.path], environment: env).status == 0)
    #expect(try String(contentsOf: file, encoding: .utf8) == value)
    let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
    #expect(mode == 0o600)
    let again = try await Command.odr(["get", "Weather", "--service", service, "--out-file", file.path], environment: env)
    #expect(again.status != 0 && again.stderr.contains("--force"), "\(again.stderr)")
    #expect(try await Command.odr(["get", "Weather", "--service", service, "--out-file", file.path, "--force"], environment: env).status == 0)
  }
}
