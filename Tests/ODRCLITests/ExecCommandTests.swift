import Foundation
import ODRCLITesting
import ODRTesting
import Testing

/// `odr exec` and `odr env` end to end: the built binary, the real keyring,
/// real shells.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct ExecCommandTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-exec-\(UUID().uuidString)")
  let bundle = "com.odr.exec.\(UUID().uuidString.prefix(8).lowercased())"
  let weather = "w-\(UUID().uuidString)"
  let maps = "m-\(UUID().uuidString)"
  var published: URL { root.appending(path: "pub") }
  var environment: [String: String] {
    var env = KeyringSession.shared.environment
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    env["ODR_CATALOG"] = "file://" + published.path
    env["ODR_SERVICE"] = bundle
    return env
  }

  func odr(_ arguments: [String], environment: [String: String]? = nil) async throws -> Command.Result {
    try await Command.odr(arguments, environment: environment ?? self.environment)
  }

  /// Publishes Weather (env WEATHER_KEY) and Maps, without fetching them.
  func publish() async throws {
    let source = root.appending(path: "src")
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    try Data("""
      { "bundle": "\(bundle)", "tags": {
        "APIKeys": { "category": "prefetch", "secrets": true, "files": ["APIKeys.json"] },
        "Plain": { "category": "onDemand", "files": ["tags.json"] } } }
      """.utf8).write(to: source.appending(path: "tags.json"))
    try Data(#"{"keys": {"Weather": {"value": "\#(weather)", "env": "WEATHER_KEY"}, "Maps": {"value": "\#(maps)"}}}"#.utf8)
      .write(to: source.appending(path: "APIKeys.json"))
    let pack = try await odr(["pack", source.path, "--output", published.path, "--quiet", "--plaintext-secrets"])
    try #require(pack.status == 0, "\(pack.stderr)")
  }

  func fetched() async throws {
    try await publish()
    let fetch = try await odr(["fetch", "APIKeys", "--quiet"])
    try #require(fetch.status == 0, "\(fetch.stderr)")
  }

  @Test func execInjectsByMetadataAndPassesTheExitCode() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await fetched()
    // --no-mask: odr becomes the command, its output untouched.
    let run = try await odr(["exec", "--no-mask", "--", "sh", "-c", #"printf '%s|%s' "$WEATHER_KEY" "$MAPS"; exit 42"#])
    #expect(run.status == 42)
    #expect(run.stdout == "\(weather)|\(maps)")
    // Masked by default.
    let masked = try await odr(["exec", "--", "sh", "-c", #"printf '%s|%s' "$WEATHER_KEY" "$MAPS"; exit 42"#])
    #expect(masked.status == 42 && masked.stdout == "***|***")
    let only = try await odr(["exec", "--no-mask", "--only", "Maps", "--", "sh", "-c", #"printf '%s|%s' "${WEATHER_KEY-unset}" "$MAPS""#])
    #expect(only.stdout == "unset|\(maps)")
    #expect(try await odr(["exec", "--only", "Nope", "--", "true"]).status == 3)
    #expect(try await odr(["exec", "--", "no-such-command-odr"]).status == 127)
    let notExecutable = root.appending(path: "data.txt")
    try Data("x".utf8).write(to: notExecutable)
    #expect(try await odr(["exec", "--", notExecutable.path]).status == 126)
    #expect(try await odr(["exec"]).status == 2)
    #expect(try await odr(["exec", "--mask-typo", "--", "touch", root.appending(path: "ran").path]).status == 2)
    #expect(!FileManager.default.fileExists(atPath: root.appending(path: "ran").path))
  }

  @Test func execEndsByTheSameSignalAsTheCommand() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await fetched()
    for mask in [[], ["--mask"]] {
      let run = try await odr(["exec"] + mask + ["--", "sh", "-c", "kill -TERM $$"])
      #expect(run.signaled && run.status == SIGTERM, "\(mask): \(run.status) \(run.stderr)")
    }
  }

  @Test func maskedExecOnATerminalGivesTheCommandATerminalAndStillMasks() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await fetched()
    let script = #"test -t 1 && echo out-tty; test -t 2 && echo err-tty >&2; printf 'key=%s\n' "$WEATHER_KEY"; stty size"#
    // `script` runs odr on a pseudo-terminal: the command's outputs are terminals too.
    let line = ([Paths.odr.path, "exec", "--", "sh", "-c", script]).map { "'" + $0.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }.joined(separator: " ")
    var env = environment
    env["COLUMNS"] = nil
    let onTerminal = try await Command.run("/usr/bin/script", ["-qec", "stty rows 33 cols 99; " + line, "/dev/null"], environment: env)
    #expect(onTerminal.status == 0, "\(onTerminal.output)")
    #expect(onTerminal.stdout.contains("out-tty\r\n") && onTerminal.stdout.contains("err-tty\r\n"), "\(onTerminal.stdout)")
    #expect(onTerminal.stdout.contains("key=***\r\n") && !onTerminal.stdout.contains(weather), "\(onTerminal.stdout)")
    #expect(onTerminal.stdout.contains("33 99\r\n"), "the terminal's size: \(onTerminal.stdout)")
    // Through pipes, pipes.
    let piped = try await odr(["exec", "--", "sh", "-c", script])
    #expect(piped.stdout.hasPrefix("key=***\n") && !piped.output.contains("-tty") && !piped.output.contains(weather), "\(piped.output)")
  }

  static let ttyChild = Paths.packageRoot.appending(path: "Tests/Peers/tty_child.py").path

  /// A command that writes to /dev/tty — a pager, an editor, a prompt —
  /// writes to a terminal odr masks: the command's session has its own
  /// controlling terminal. odr relays the user's terminal (raw: keys go
  /// through as typed, Ctrl-C included, to an editor that wants it), its
  /// size, and puts its settings back. Under `script`, a terminal as a user
  /// has one.
  @Test(arguments: [("pager", "jq", "b'jq'"), ("editor", "i\u{16}\u{3}q", "b'i\\x03q'")])
  func aCommandOnDevTtyIsMaskedAndGetsTheTerminal(mode: String, keys: String, read: String) async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await fetched()
    func quoted(_ words: [String]) -> String { words.map { "'" + $0.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }.joined(separator: " ") }
    // The keys are typed ahead, before odr runs: script's terminal must
    // not make a signal of the Ctrl-C while it is not odr's yet (Ctrl-V
    // quotes it until `stty -isig` has run; -isig then holds for the
    // command's terminal too, until the editor makes it raw).
    let line = """
      stty rows 33 cols 99 -isig; before=$(stty -g)
      \(quoted([Paths.odr.path, "exec", "--", "python3", Self.ttyChild, mode])); echo "exit=$?"
      [ "$before" = "$(stty -g)" ] && echo restored
      \(quoted([Paths.odr.path, "exec", "--", "sh", "-c", #"printf 'tty=%s\n' "$WEATHER_KEY" > /dev/tty"#]))
      """
    let run = try await Command.run("/usr/bin/script", ["-qec", line, "/dev/null"], input: keys, environment: environment)
    #expect(run.status == 0, "\(run.output)")
    #expect(!run.output.contains(weather), "\(run.output)")
    #expect(run.stdout.contains(mode == "editor" ? "\u{1b}[5;10Hkey=***" : "key=***\r"), "\(run.stdout.debugDescription)")
    #expect(run.stdout.contains("size=33 99"), "\(run.stdout.debugDescription)")
    // Typed ahead, the keys reach the terminal before or after the editor
    // made it raw (script writes them when it gets to them): the Ctrl-V
    // that quotes the Ctrl-C is then taken by the line discipline, or
    // passed on as typed. Either way the Ctrl-C is the editor's byte.
    let reads = [read, read.replacingOccurrences(of: "\\x03", with: "\\x16\\x03")]
    #expect(reads.contains { run.stdout.contains("\(mode) read=\($0)") }, "\(run.stdout.debugDescription)")
    #expect(run.stdout.contains("exit=0\r\nrestored\r\ntty=***\r\n"), "\(run.stdout.debugDescription)")
  }

  /// A prompt whose last byte could begin a value ("w" is the first byte
  /// of the value) shows while the command waits for an answer: what the
  /// masker holds back is written after a short pause. The driver answers
  /// only once it has seen the whole prompt.
  @Test func aPromptShowsWhileTheCommandWaits() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await fetched()
    let driver = #"""
      import os, select, subprocess, sys, time
      p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
      seen, deadline = b"", time.monotonic() + 10
      while not seen.endswith(b"Next: w") and time.monotonic() < deadline:
          if select.select([p.stdout], [], [], 0.5)[0]:
              seen += os.read(p.stdout.fileno(), 100)
      print("prompt shown" if seen.endswith(b"Next: w") else "prompt held: %r" % seen)
      p.stdin.write(b"y\n"); p.stdin.close()
      print("rest=%r" % p.stdout.read(), "exit=%d" % p.wait())
      """#
    let run = try await Command.run("/usr/bin/env", ["python3", "-c", driver, Paths.odr.path, "exec", "--", "sh", "-c",
                                                    #"printf 'Next: w'; read answer; printf ' %s %s\n' "$answer" "$WEATHER_KEY""#],
                                    environment: environment)
    #expect(run.stdout.contains("prompt shown"), "\(run.output)")
    #expect(run.stdout.contains("rest=b' y ***\\n' exit=0"), "\(run.output)")
  }

  /// A non-blocking stdout (Node-based CI runners set O_NONBLOCK) that a
  /// slow reader leaves full: odr waits for it to drain, as a blocking
  /// write would, instead of closing the command's output.
  @Test func aNonBlockingStdoutThatFillsUpLosesNothing() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await fetched()
    let driver = #"""
      import fcntl, os, subprocess, sys
      r, w = os.pipe()
      fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)
      p = subprocess.Popen(sys.argv[1:], stdout=w)
      os.close(w)
      total = 0
      while True:  # 4 KiB at a time: odr writes up to 1 MiB at once, so the 64 KiB pipe fills
          chunk = os.read(r, 4096)
          if not chunk: break
          total += len(chunk)
      print("bytes=%d exit=%d" % (total, p.wait()))
      """#
    let run = try await Command.run("/usr/bin/env", ["python3", "-c", driver, Paths.odr.path, "exec", "--", "sh", "-c",
                                                    "head -c 3000000 /dev/zero | tr '\\0' a; echo \"$WEATHER_KEY\""],
                                    environment: environment)
    #expect(run.stdout.contains("bytes=3000004 exit=0"), "\(run.output)")
  }

  @Test func pristineKeepsOnlyTheKeysAndTheBasics() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await fetched()
    var env = environment
    env["SOMETHING_ELSE"] = "x"
    env["LANG"] = "C.UTF-8"
    let run = try await odr(["exec", "--pristine", "--", "/usr/bin/env"], environment: env)
    let names = Set(run.stdout.split(separator: "\n").map { String($0.prefix { $0 != "=" }) })
    let basics = ["PATH", "HOME", "USER", "LANG", "TERM"].filter { env[$0] != nil }
    #expect(names == Set(basics + ["WEATHER_KEY", "MAPS"]))
  }

  @Test func maskReplacesValuesSplitAcrossWritesAndBase64() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await fetched()
    let script = #"""
      printf 'a %s b\n' "$MAPS"
      printf '%s' "${MAPS%????????????????}"; sleep 0.2; printf '%s\n' "${MAPS#${MAPS%????????????????}}"
      printf '%s' "$WEATHER_KEY" | base64 -w0; echo
      printf 'Basic %s\n' "$(printf 'user:%s' "$WEATHER_KEY" | base64 -w0)"
      printf 'err %s\n' "$WEATHER_KEY" >&2
      exit 5
      """#
    let run = try await odr(["exec", "--mask", "--", "sh", "-c", script])
    #expect(run.status == 5)
    #expect(run.stdout.hasPrefix("a *** b\n***\n***\nBasic "), "\(run.stdout)")
    #expect(run.stderr == "err ***\n")
    for value in [weather, maps] {
      let base64 = Data(value.utf8).base64EncodedString()
      #expect(!run.output.contains(value) && !run.output.contains(String(base64.dropFirst(4).prefix(24))))
    }
  }

  @Test func maskedExecReturnsWhenABackgroundChildKeepsThePipesOpen() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await fetched()
    // Through python, which closes every inherited descriptor above 2: Foundation's
    // Process hands its child a socket whose closing it waits for, and the
    // background `sleep` would inherit it.
    let closeAndExec = "import os, sys; os.closerange(3, 65536); os.execv(sys.argv[1], sys.argv[1:])"
    let run = try await Command.run("/usr/bin/python3", ["-c", closeAndExec, Paths.odr.path, "exec", "--mask", "--", "sh", "-c", #"sleep 30 & printf '%s\n' "$MAPS""#], environment: environment)
    #expect(run.status == 0)
    #expect(run.stdout == "***\n")
    #expect(run.duration < .seconds(20))  // not a benchmark: it must not wait for the sleep
  }

  @Test func sigtermToMaskedExecReachesTheCommand() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await fetched()
    let process = Process()
    process.executableURL = Paths.odr
    process.arguments = ["exec", "--mask", "--", "sh", "-c", "trap 'echo got-term; exit 7' TERM; echo ready; while :; do sleep 0.05; done"]
    process.environment = environment
    let stdout = Pipe()
    process.standardOutput = stdout
    process.standardError = Pipe()
    try process.run()
    #expect(await stdout.fileHandleForReading.nextLine() == "ready")
    // No process involved carries a secret in its argv.
    for pid in [process.processIdentifier] + descendants(of: process.processIdentifier) {
      let cmdline = (try? Data(contentsOf: URL(filePath: "/proc/\(pid)/cmdline"))) ?? Data()
      #expect(cmdline.range(of: Data(weather.utf8)) == nil && cmdline.range(of: Data(maps.utf8)) == nil)
    }
    #expect(!descendants(of: process.processIdentifier).isEmpty)
    kill(process.processIdentifier, SIGTERM)
    #expect(await stdout.fileHandleForReading.nextLine() == "got-term")
    await process.exited()
    #expect(process.terminationStatus == 7)
  }

  @Test func fetchInjectsWithoutAKeyringAndWritesNothing() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await publish()
    var env = environment
    env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/odr-bus"
    let run = try await odr(["exec", "--fetch", "APIKeys", "--no-mask", "--", "sh", "-c", #"printf '%s' "$WEATHER_KEY""#], environment: env)
    #expect(run.status == 0, "\(run.stderr)")
    #expect(run.stdout == weather)
    #expect(try await odr(["env", "--fetch", "APIKeys", "--format", "json"], environment: env).stdout.contains(maps))
    #expect(try await odr(["exec", "--fetch", "Plain", "--", "true"], environment: env).status == 3)
    #expect(try await odr(["exec", "--", "true"], environment: env).status == 5)  // and without --fetch, it needs the keyring
    let blobs = root.appending(path: "cache/odr/\(bundle)/blobs")
    #expect(((try? FileManager.default.contentsOfDirectory(atPath: blobs.path)) ?? []).isEmpty)
  }

  @Test func fetchOverHTTPInjectsFromMemory() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await publish()
    try await TestHTTPServer.serving(files: published) { server in
      var env = environment
      env["ODR_CATALOG"] = server.baseURL.absoluteString
      env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/odr-bus"
      let run = try await odr(["exec", "--fetch", "APIKeys", "--mask", "--", "sh", "-c", #"printf '%s|%s' "$WEATHER_KEY" "${#MAPS}""#], environment: env)
      #expect(run.status == 0, "\(run.stderr)")
      #expect(run.stdout == "***|\(maps.count)")
      let blobs = root.appending(path: "cache/odr/\(bundle)/blobs")
      #expect(((try? FileManager.default.contentsOfDirectory(atPath: blobs.path)) ?? []).isEmpty)
      for blob in try FileManager.default.contentsOfDirectory(atPath: published.appending(path: "blobs").path) {
        server.setFault(.flipByte(3), forPathEndingWith: blob)
      }
      #expect(try await odr(["exec", "--fetch", "APIKeys", "--", "true"], environment: env).status == 4)
    }
  }

  @Test func envShellAndDotenvReproduceTrickyValuesInRealShells() async throws {
    let service = "com.odr.env.\(UUID().uuidString.prefix(8).lowercased())"
    var env = KeyringSession.shared.environment
    env["ODR_SERVICE"] = service
    for (name, value) in TrickyValues.all {
      #expect(try await Command.odr(["set", name, "--keep-newline"], input: value, environment: env).status == 0)
    }
    defer { Command.odrInBackground(["delete", "--all"], environment: env) }
    let names = TrickyValues.all.keys.sorted()
    let variables = names.map { $0.replacingOccurrences(of: "([a-z])([A-Z])", with: "$1_$2", options: .regularExpression).uppercased() }
    let printAll = "printf '%s\\0' " + variables.map { "\"$\($0)\"" }.joined(separator: " ")
    let folder = FileManager.default.temporaryDirectory.appending(path: "odr-dotenv-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let scripts = [
      ("/bin/bash", #"eval "$("$ODR" env --format shell)" && "# + printAll),
      ("/bin/sh", #""$ODR" env --format dotenv > "$DIR/vars" && set -a && . "$DIR/vars" && set +a && "# + printAll),
    ]
    env["ODR"] = Paths.odr.path
    env["DIR"] = folder.path
    for (shell, script) in scripts {
      let result = try await Command.run(shell, ["-c", script], environment: env)
      #expect(result.status == 0, "\(shell): \(result.stderr)")
      let values = result.stdout.split(separator: "\0", omittingEmptySubsequences: false).dropLast().map(String.init)
      #expect(values == names.map { TrickyValues.all[$0]! }, "\(shell)")
    }
    let github = folder.appending(path: "github_env")
    env["GITHUB_ENV"] = github.path
    let result = try await Command.odr(["env", "--format", "github"], environment: env)
    #expect(result.status == 0)
    #expect(result.stdout.split(separator: "\n").allSatisfy { $0.hasPrefix("::add-mask::") })
    #expect(try String(contentsOf: github, encoding: .utf8).contains("\nghadelimiter_0\n"))
    #expect(try await Command.odr(["env", "--format", "github"], environment: env.filter { $0.key != "GITHUB_ENV" }).status == 2)
  }

  /// Every process below `pid`.
  func descendants(of pid: Int32) -> [Int32] {
    var result: [Int32] = []
    var frontier = [pid]
    while let parent = frontier.popLast() {
      for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(parent)/task")) ?? [] {
        let children = (try? String(contentsOfFile: "/proc/\(parent)/task/\(task)/children", encoding: .utf8)) ?? ""
        for child in children.split(separator: " ").compactMap({ Int32($0) }) {
          result.append(child)
          frontier.append(child)
        }
      }
    }
    return result
  }
}
