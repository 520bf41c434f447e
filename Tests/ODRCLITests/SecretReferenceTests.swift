import Foundation
import ODRCLITesting
import ODRTesting
import Testing

/// `odr exec --env-file`, `odr inject` and `odr read` against the real
/// keyring, with python-dotenv as the peer of the dotenv parser.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(3))) struct SecretReferenceTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-refs-\(UUID().uuidString)")
  let service = "com.odr.refs.\(UUID().uuidString.prefix(8).lowercased())"
  let weather = "w-\(UUID().uuidString)"
  let maps = "m-\(UUID().uuidString)"
  var environment: [String: String] {
    var env = KeyringSession.shared.environment
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    env["ODR_SERVICE"] = service
    env["ODR_CATALOG"] = nil
    return env
  }

  init() throws {
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
  }

  func odr(_ arguments: [String], input: String? = nil) async throws -> Command.Result {
    try await Command.odr(arguments, input: input, environment: environment)
  }

  func file(_ name: String, _ text: String) throws -> String {
    let url = root.appending(path: name)
    try Data(text.utf8).write(to: url)
    return url.path
  }

  func storeKeys() async throws {
    try #require(try await odr(["set", "Weather"], input: weather).status == 0)
    try #require(try await odr(["set", "Maps"], input: maps).status == 0)
  }

  /// The environment a command sees, as JSON, for the given variables.
  func seen(_ arguments: [String], names: [String]) async throws -> [String: String] {
    let script = "import os, json, sys; print(json.dumps({k: os.environ.get(k) for k in sys.argv[1:]}))"
    let result = try await odr(["exec", "--no-mask"] + arguments + ["--", "/usr/bin/python3", "-c", script] + names)
    try #require(result.status == 0, "\(result.stderr)")
    return try JSONDecoder().decode([String: String?].self, from: Data(result.stdout.utf8)).compactMapValues { $0 }
  }

  /// python-dotenv's reading of a file.
  func pythonDotenv(_ path: String) async throws -> [String: String] {
    let result = try await Command.run("/usr/bin/python3", ["-c", "import sys, json; from dotenv import dotenv_values; print(json.dumps(dotenv_values(sys.argv[1], interpolate=False)))", path])
    try #require(result.status == 0, "python-dotenv: \(result.stderr)")
    return try JSONDecoder().decode([String: String].self, from: Data(result.stdout.utf8))
  }

  @Test(arguments: ["\n", "\r\n"])
  func theCorpusReadsAsPythonDotenvReadsIt(lineEnd: String) async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let corpus = try String(contentsOf: Paths.packageRoot.appending(path: "resources/fixtures/dotenv-corpus.env"), encoding: .utf8)
    let path = try file("corpus.env", corpus.replacingOccurrences(of: "\n", with: lineEnd))
    let expected = try await pythonDotenv(path)
    #expect(expected.count >= 40)
    let got = try await seen(["--env-file", path], names: expected.keys.sorted())
    for name in expected.keys.sorted() {
      #expect(got[name] == expected[name], "\(name)")
    }
  }

  @Test func referencesResolveInEveryPositionAndLaterFilesWin() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await storeKeys()
    let first = try file("a.env", """
      W1=odr://Weather
      export W2='odr://Weather'
      W3="odr://\(service)/Weather" # full form, with a comment
      M1 = odr://Maps
      OVERRIDE=from-first
      PLAIN=odr-is-not-a-reference
      """)
    let second = try file("b.env", "OVERRIDE=odr://Maps\r\n")
    let got = try await seen(["--env-file", first, "--env-file", second], names: ["W1", "W2", "W3", "M1", "OVERRIDE", "PLAIN"])
    #expect(got == ["W1": weather, "W2": weather, "W3": weather, "M1": maps, "OVERRIDE": maps, "PLAIN": "odr-is-not-a-reference"])
    // Only the files' variables, not every key of the service.
    #expect(try await seen(["--env-file", second], names: ["WEATHER", "MAPS"]).isEmpty)
  }

  @Test func errorsNameFileLineAndColumnAndRunNothing() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await storeKeys()
    let marker = root.appending(path: "ran").path
    let cases: [(String, String)] = [
      ("OK=odr://Weather\nBAD=\"${HOME}\"\n", "bad.env:2:6: ${…} would be expanded by python-dotenv"),
      ("OK=1\n\nMISSING=odr://Nope\n", "bad.env:3:9: no key 'Nope' in \(service)"),
      ("LD_PRELOAD=odr://Weather\n", "bad.env:1:12: LD_PRELOAD is one of the variables"),
      ("A=\"never closed\n", "bad.env:1:3: this double-quoted value is never closed"),
      ("1ABC=x\n", "bad.env:1:1: '1ABC' is not an environment variable name"),
    ]
    for (text, message) in cases {
      let path = try file("bad.env", text)
      let result = try await odr(["exec", "--env-file", path, "--", "/usr/bin/touch", marker])
      #expect(result.status != 0)
      #expect(result.stderr.contains(message), "\(result.stderr)")
      #expect(!result.output.contains(weather))
      #expect(!FileManager.default.fileExists(atPath: marker))
    }
  }

  @Test func valuesStayOutOfArgvAndMaskMasksThem() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await storeKeys()
    let path = try file("argv.env", "TOKEN=odr://Weather\n")
    // The command prints its own and its parent's command lines, then the value.
    let script = #"tr '\0' ' ' < /proc/$$/cmdline; echo; tr '\0' ' ' < /proc/$PPID/cmdline; echo; echo "token=$TOKEN""#
    let plain = try await odr(["exec", "--env-file", path, "--no-mask", "--", "/bin/sh", "-c", script])
    let lines = plain.stdout.split(separator: "\n")
    #expect(lines.count == 3 && !lines[0].contains(weather) && !lines[1].contains(weather))
    #expect(lines.last == "token=\(weather)")
    let masked = try await odr(["exec", "--env-file", path, "--mask", "--", "/bin/sh", "-c", script])
    #expect(!masked.stdout.contains(weather))
    #expect(masked.stdout.contains("token=***"))
  }

  @Test func injectFillsATemplateAndWritesA0600FileOnlyWithForce() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await storeKeys()
    let template = try file("config.tpl", """
      weather: {{ odr://Weather }}
      maps: {{odr://\(service)/Maps}} and {{"{{"}} literal }}
      """)
    let shown = try await odr(["inject", "-i", template])
    #expect(shown.status == 0, "\(shown.stderr)")
    #expect(shown.stdout == "weather: \(weather)\nmaps: \(maps) and {{ literal }}")
    let out = root.appending(path: "config.yml").path
    #expect(try await odr(["inject", "-i", template, "-o", out]).status == 0)
    #expect((try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? Int) == 0o600)
    let again = try await odr(["inject", "-i", template, "-o", out])
    #expect(again.status == 1)
    #expect(again.stderr.contains("without --force"))
    #expect(try await odr(["inject", "-i", template, "-o", out, "--force"]).status == 0)
    let broken = try file("broken.tpl", "ok\nkey: {{ odr://Weather }} then {{ nope }}\n")
    let error = try await odr(["inject", "-i", broken, "-o", root.appending(path: "never").path])
    #expect(error.stderr.contains("broken.tpl:2:31:"), "\(error.stderr)")
    #expect(!FileManager.default.fileExists(atPath: root.appending(path: "never").path))
    let empty = try file("empty.tpl", "no references\n")
    #expect(try await odr(["inject", "-i", empty]).status == 2)  // bad input: a usage error
    #expect(try await odr(["inject", "-i", empty, "--allow-empty"]).stdout == "no references\n")
  }

  @Test func readPrintsOneValueOrWritesA0600File() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await storeKeys()
    #expect(try await odr(["read", "odr://Weather"]).stdout == weather)
    #expect(try await odr(["read", "odr://\(service)/Maps", "-n"]).stdout == maps)
    let out = root.appending(path: "maps.key").path
    #expect(try await odr(["read", "odr://Maps", "--out-file", out]).status == 0)
    #expect(try String(contentsOfFile: out, encoding: .utf8) == maps)
    #expect((try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? Int) == 0o600)
    #expect(try await odr(["read", "odr://Maps", "--out-file", out]).status == 1)
    let missing = try await odr(["read", "odr://Nope"])
    #expect(missing.status == 3)
    #expect(missing.stderr.contains("no key 'Nope' in \(service)"))
    #expect(try await odr(["read", "https://not-a-reference"]).status == 2)
  }

  @Test func fetchResolvesFromThePackWithoutAKeyring() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let source = root.appending(path: "src")
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    try Data(#"{"bundle": "\#(service)", "tags": {"APIKeys": {"category": "prefetch", "secrets": true, "files": ["APIKeys.json"]}}}"#.utf8)
      .write(to: source.appending(path: "tags.json"))
    try Data(#"{"Weather": "\#(weather)"}"#.utf8).write(to: source.appending(path: "APIKeys.json"))
    let catalog = root.appending(path: "pub").path
    #expect(try await odr(["pack", source.path, "--output", catalog, "--plaintext-secrets", "--quiet"]).status == 0)
    let path = try file("ci.env", "API_TOKEN=odr://Weather\n")
    var env = environment
    env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"
    let result = try await Command.odr(["exec", "--env-file", path, "--fetch", "APIKeys", "--catalog", catalog, "--",
                                  "/bin/sh", "-c", "test \"$API_TOKEN\" = \(weather)"], environment: env)
    #expect(result.status == 0, "\(result.stderr)")
  }
}
