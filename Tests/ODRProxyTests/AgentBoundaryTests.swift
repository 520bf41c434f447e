import Foundation
import ODRCLITesting
import ODRTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The agent boundary of `odr exec --proxy`, attacked from inside by the
/// built binary's command, as the ordinary user the suite runs as: one row
/// per thing a command could reach and per published bypass of credential
/// proxies (docs/agents.md's threat model is this table). The whole corpus
/// runs twice in one world: in the sandbox, where every row must hold, and
/// with `--no-sandbox`, where the sandbox's rows must break (so each of
/// them can fail) and the proxy's rows must hold all the same.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct AgentBoundaryTests {
  /// One attack: a shell snippet that prints one line, what that line is in
  /// the sandbox, and what it is without it (nil: not compared).
  struct Row: Sendable, CustomTestStringConvertible {
    let name: String
    /// What the command tries to reach, and what stops it (docs/agents.md).
    let reach: String
    let script: String
    let sandboxed: String
    let unsandboxed: String?
    var testDescription: String { name }

    /// A row the proxy holds whether or not there is a sandbox.
    static func proxy(_ name: String, _ reach: String, _ script: String, _ expected: String) -> Row {
      Row(name: name, reach: reach, script: script, sandboxed: expected, unsandboxed: expected)
    }
  }

  static let rows: [Row] = [
    Row(name: "session bus by its path", reach: "the keyring through the session bus", script:
          #"DBUS_SESSION_BUS_ADDRESS="$BUS" secret-tool lookup service "$SERVICE" key Weather >/dev/null && echo reached || echo refused"#,
        sandboxed: "refused", unsandboxed: "reached"),
    Row(name: "an abstract unix socket", reach: "a bus or X11 at an abstract address", script: #"python3 probe.py abstract "$ABSTRACT""#,
        sandboxed: "refused", unsandboxed: "canary"),
    Row(name: "a socket in /tmp", reach: "tmux, screen, X11, ssh-agent sockets", script: #"python3 probe.py unix "$TMPSOCK""#,
        sandboxed: "refused", unsandboxed: "canary"),
    Row(name: "a socket in the runtime folder", reach: "the session bus, the keyring's control socket, docker, gpg-agent",
        script: #"python3 probe.py unix "$RUNSOCK""#, sandboxed: "refused", unsandboxed: "canary"),
    Row(name: "a socket in the home", reach: "sockets in dotfolders", script: #"python3 probe.py unix "$HOMESOCK""#,
        sandboxed: "refused", unsandboxed: "canary"),
    Row(name: "a TCP listener on the host's loopback", reach: "local services around the proxy", script: #"python3 probe.py tcp "$TCPPORT""#,
        sandboxed: "refused", unsandboxed: "canary"),
    Row(name: "a client that ignores the proxy", reach: "the network around the proxy", script:
          #"curl -sk --noproxy '*' -o /dev/null -w '%{http_code}' "$TLS/header""#, sandboxed: "000", unsandboxed: "401"),
    Row(name: "the kernel keyring", reach: "odr's --store kernel keys and identities", script:
          #"keyctl search @u user "$KEYDESC" >/dev/null 2>&1 && echo reached || echo refused"#, sandboxed: "refused", unsandboxed: "reached"),
    Row(name: "another process's environment", reach: "other processes of the user", script:
          #"grep -l "$ENVCANARY" /proc/[0-9]*/environ 2>/dev/null | grep -q . && echo reached || echo refused"#,
        sandboxed: "refused", unsandboxed: "reached"),
    Row(name: "the machine's processes", reach: "every process of the machine", script:
          #"[ "$(ls /proc | grep -c '^[0-9][0-9]*$')" -le 12 ] && echo few || echo many"#, sandboxed: "few", unsandboxed: "many"),
    Row(name: "an identity file in the home", reach: "~/.ssh and identity files that open the secrets pack", script:
          #"grep -q IDENTITY-CANARY ~/.ssh/id_ed25519 2>/dev/null && echo reached || echo refused"#, sandboxed: "refused", unsandboxed: "reached"),
    Row(name: "odr's cache inside the working folder", reach: "the ciphertext of the secrets pack", script:
          #"[ -n "$(ls -A .odr-cache/odr 2>/dev/null)" ] && echo listed || echo empty"#, sandboxed: "empty", unsandboxed: "listed"),
    Row(name: "a git hook", reach: ".git: code that runs outside the sandbox", script:
          #"echo 'echo pwned' > .git/hooks/post-checkout 2>/dev/null && echo written || echo refused"#, sandboxed: "refused", unsandboxed: "written"),
    Row(name: "git's core.fsmonitor", reach: ".git/config: code that runs outside the sandbox", script:
          #"git config core.fsmonitor 'touch /tmp/pwned' 2>/dev/null && echo written || echo refused"#, sandboxed: "refused", unsandboxed: "written"),
    Row(name: "renaming .git", reach: ".git swapped for one of the command's", script:
          #"mv .git .git-moved 2>/dev/null && mv .git-moved .git && echo moved || echo refused"#, sandboxed: "refused", unsandboxed: "moved"),
    Row(name: "~/.bashrc", reach: "a shell's start-up file: code a later shell runs", script:
          #"echo 'echo pwned' >> ~/.bashrc 2>/dev/null && echo written || echo refused"#, sandboxed: "refused", unsandboxed: "written"),
    Row(name: "a user namespace of its own", reach: "namespaces to unmount the sandbox's covers", script:
          #"unshare --user --map-root-user true 2>/dev/null && echo made || echo refused"#, sandboxed: "refused", unsandboxed: "made"),
    Row(name: "typing into the terminal (TIOCSTI)", reach: "commands typed into the user's shell", script: "python3 probe.py tiocsti",
        sandboxed: "1", unsandboxed: nil),
    Row(name: "the first process's environment", reach: "odr's own variables", script:
          #"echo "odr:$(tr '\0' '\n' < /proc/1/environ | grep -c -e '^ODR_' -e '^DBUS_SESSION_BUS_ADDRESS=') proxy:$(tr '\0' '\n' < /proc/1/environ | grep -c '^HTTPS_PROXY=')""#,
        sandboxed: "odr:0 proxy:1", unsandboxed: nil),
    .proxy("a Host header naming another host", "the key at the attacker's address (Host spoof)",
           #"curl -s -o /dev/null -w '%{http_code}' "$TLS/header" -H "Authorization: Bearer $WEATHER" -H "Host: evil.example""#, "421"),
    .proxy("plain http to another address with the bound Host", "the key at the attacker's address over plain http",
           #"curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.2:$ECHOPORT/echo-body" -H "Host: 127.0.0.1:$ECHOPORT" -H "X-Key: $LOCAL""#, "421"),
    .proxy("one key on another key's host", "key A substituted on provider B's host",
           #"[ "$(curl -s "http://localhost:$ECHOPORT/header-value" -H "X-Key: $LOCAL")" = "$LOCAL" ] && echo as-is || echo substituted"#, "as-is"),
    .proxy("another port of a bound loopback host", "a listener the command (or another user) opened",
           #"curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$TCPPORT/" -H "X-Key: $LOCAL""#, "403"),
    .proxy("a placeholder in the body to an echoing host", "body substitution echoed back",
           #"[ "$(curl -s --data "k=$LOCAL" "http://127.0.0.1:$ECHOPORT/echo-body" -H "X-Key: $LOCAL")" = "k=$LOCAL" ] && echo as-is || echo substituted"#, "as-is"),
    .proxy("a placeholder in a reflected header", "User-Agent reflected by the host",
           #"[ "$(curl -s -A "$LOCAL" "http://127.0.0.1:$ECHOPORT/user-agent" -H "X-Key: $LOCAL")" = "$LOCAL" ] && echo as-is || echo substituted"#, "as-is"),
    .proxy("a value asked for in Range pieces", "an echoed value cut where the masker cannot see it",
           #"body=$(curl -s -H "X-Key: $LOCAL" -H "Range: bytes=0-5" "http://127.0.0.1:$ECHOPORT/stored"); [ "$body" = "$LOCAL" ] && echo whole-masked || echo "got:$body""#,
           "whole-masked"),
    .proxy("a value echoed in a header's name", "header names are not masked",
           #"curl -s -D - -o /dev/null -H "X-Key: $LOCAL" "http://127.0.0.1:$ECHOPORT/header-name" | tr -d '\r' | grep -ci "^x-echo-$LOCAL:""#, "1"),
    .proxy("an encoded answer to a request without a key", "an echoed value compressed past the masker",
           #"curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$ECHOPORT/gzip""#, "502"),
    .proxy("the machine's loopback through the proxy (plain http)", "local services through the proxy",
           #"curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$TCPPORT/""#, "403"),
    .proxy("the machine's loopback through the proxy (a CONNECT tunnel)", "local services through a tunnel",
           #"curl -s -o /dev/null -p -w '%{http_connect}' "http://localhost:$TCPPORT/""#, "403"),
    .proxy("a cloud's instance metadata", "the machine's cloud credentials (169.254.169.254)",
           #"curl -s -o /dev/null -w '%{http_code}' "http://169.254.169.254/latest/meta-data/""#, "403"),
    .proxy("the proxy without the run's token", "another local user using the proxy",
           #"curl -s -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:${HTTPS_PROXY##*:}" "http://127.0.0.1:$ECHOPORT/echo-body""#, "407"),
  ]

  /// What the two runs printed, row by row, and what the test saw around them.
  struct Outcome: Sendable {
    var sandboxed: [String: String] = [:]
    var unsandboxed: [String: String] = [:]
    var sandboxedOutput = ""
    var unsandboxedStderr = ""
    var secrets: [String] = []
    var bashrcAfter = ""
  }

  /// The corpus, run once for every row's test.
  static let outcome = Task { try await run() }

  @Test(arguments: rows) func theBoundaryHolds(_ row: Row) async throws {
    let outcome = try await Self.outcome.value
    #expect(outcome.sandboxed[row.name] == row.sandboxed, "in the sandbox: \(outcome.sandboxed[row.name] ?? "no line")")
    if let unsandboxed = row.unsandboxed {
      #expect(outcome.unsandboxed[row.name] == unsandboxed, "with --no-sandbox: \(outcome.unsandboxed[row.name] ?? "no line")")
    }
  }

  @Test func theSandboxedRunShowsNoValueAndLeavesTheRealHomeAlone() async throws {
    let outcome = try await Self.outcome.value
    for secret in outcome.secrets { #expect(!outcome.sandboxedOutput.contains(secret)) }
    #expect(outcome.bashrcAfter == "# the user's own\n")
    #expect(outcome.unsandboxedStderr.contains("the command runs without a sandbox (--no-sandbox)"), "\(outcome.unsandboxedStderr)")
  }

  /// Sets the world up, runs the corpus in and out of the sandbox, and
  /// takes it down. (It throws rather than records: every test that
  /// awaits it must fail.)
  static func run() async throws -> Outcome {
    let root = FileManager.default.temporaryDirectory.appending(path: "odr-boundary-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }  // best effort: the test is over
    let id = Substring(UUID().uuidString.prefix(8).lowercased())
    let (weather, local, other) = ("sk-\(UUID().uuidString)", "lv\(UUID().uuidString.filter(\.isHexDigit).lowercased())", "ov-\(UUID().uuidString)")
    let upstream = try await TestUpstream.start(root: root, weather: weather, maps: "m-\(UUID().uuidString)")
    defer { upstream.stop() }
    return try await TestHTTPServer.answering({ request in echo(request, local: local) }) { echo in
      let work = root.appending(path: "work"), home = root.appending(path: "home")
      for folder in [work, home.appending(path: ".ssh"), root.appending(path: "runtime"), root.appending(path: "src")] {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      }
      try Data("# the user's own\n".utf8).write(to: home.appending(path: ".bashrc"))
      try Data("IDENTITY-CANARY \(id)\n".utf8).write(to: home.appending(path: ".ssh/id_ed25519"))
      try Data(probe.utf8).write(to: work.appending(path: "probe.py"))
      let bundle = "com.odr.boundary.\(id)"
      var env = KeyringSession.shared.environment
      env["HOME"] = home.path
      env["XDG_CACHE_HOME"] = work.appending(path: ".odr-cache").path
      env["XDG_STATE_HOME"] = root.appending(path: "state").path
      env["XDG_DATA_HOME"] = root.appending(path: "data").path
      env["XDG_RUNTIME_DIR"] = root.appending(path: "runtime").path
      env["ODR_SERVICE"] = bundle
      env["SSL_CERT_FILE"] = upstream.trust.path
      env["TMPDIR"] = root.path
      let keys = """
        {"keys": {"Weather": {"value": "\(weather)", "header": "Authorization", "scheme": "Bearer", "hosts": ["127.0.0.1"]},
                  "Local": {"value": "\(local)", "header": "X-Key", "hosts": ["127.0.0.1:\(echo.port)"]},
                  "Other": {"value": "\(other)", "header": "X-Key", "hosts": ["localhost:\(echo.port)"]}}}
        """
      try Data(#"{"bundle": "\#(bundle)", "tags": {"APIKeys": {"category": "prefetch", "secrets": true, "files": ["APIKeys.json"]}}}"#.utf8)
        .write(to: root.appending(path: "src/tags.json"))
      try Data(keys.utf8).write(to: root.appending(path: "src/APIKeys.json"))
      for arguments in [["pack", root.appending(path: "src").path, "--output", root.appending(path: "pub").path, "--quiet", "--plaintext-secrets"],
                        ["fetch", "APIKeys", "--catalog", root.appending(path: "pub").path, "--quiet"]] {
        let result = try await Command.odr(arguments, environment: env)
        guard result.status == 0 else { throw TestFailure("odr \(arguments[0]): \(result.stderr)") }
      }
      for arguments in [["init", "-q", work.path], ["-C", work.path, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "start"]] {
        let git = try await Command.run("/usr/bin/git", arguments)
        guard git.status == 0 else { throw TestFailure("git: \(git.stderr)") }
      }
      // The canaries: sockets and a TCP port outside, a kernel key, a process's environment.
      let tmpSocket = "/tmp/odr-canary-\(id)/sock"
      let (runSocket, homeSocket) = (root.appending(path: "runtime/canary.sock").path, home.appending(path: ".canary.sock").path)
      let canaries = try Canaries(id: id, sockets: [tmpSocket, runSocket, homeSocket])
      defer { canaries.stop() }
      let preamble = """
        BUS='\(KeyringSession.shared.busAddress)' SERVICE='\(bundle)' ABSTRACT='odr-canary-\(id)' TMPSOCK='\(tmpSocket)'
        RUNSOCK='\(runSocket)' HOMESOCK='\(homeSocket)' TCPPORT=\(canaries.port) TLS='\(upstream.origin)' ECHOPORT=\(echo.port)
        KEYDESC='odr-canary-\(id)' ENVCANARY='ENV-CANARY-\(id)'

        """
      let script = preamble + rows.indices.map { index in
        #"printf '%s\t%s\n' \#(index) "$( { \#(rows[index].script) ; } 2>/dev/null | tr '\n' ' ' | sed 's/ *$//')""#
      }.joined(separator: "\n")
      var outcome = Outcome()
      outcome.secrets = [weather, local, other]
      let inside = try await Command.odr(["exec", "--proxy", "--", "/bin/sh", "-c", script], environment: env, in: work)
      guard inside.status == 0 else { throw TestFailure("the sandboxed run: \(inside.stderr)") }
      outcome.sandboxed = lines(inside.stdout)
      outcome.sandboxedOutput = inside.stdout + inside.stderr
      outcome.bashrcAfter = try String(contentsOf: home.appending(path: ".bashrc"), encoding: .utf8)
      let outside = try await Command.odr(["exec", "--proxy", "--no-sandbox", "--", "/bin/sh", "-c", script], environment: env, in: work)
      guard outside.status == 0 else { throw TestFailure("the run without a sandbox: \(outside.stderr)") }
      outcome.unsandboxed = lines(outside.stdout)
      outcome.unsandboxedStderr = outside.stderr
      return outcome
    }
  }

  /// Each row's line, by the row's name.
  static func lines(_ text: String) -> [String: String] {
    Dictionary(text.split(separator: "\n").compactMap { line in
      let parts = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
      guard parts.count == 2, let index = Int(parts[0]), rows.indices.contains(index) else { return nil }
      return (rows[index].name, String(parts[1]))
    }, uniquingKeysWith: { first, _ in first })
  }

  /// The bound API over plain http: it echoes a body, returns the key's
  /// value as an API that stores it would (honouring Range), names a header
  /// after the key it got, and answers compressed without being asked.
  static func echo(_ request: TestHTTPServer.Request, local: String) -> TestHTTPServer.Reply {
    switch request.path {
    case "/echo-body": return TestHTTPServer.Reply(body: request.body)
    case "/stored":
      let value = Data(local.utf8)
      guard let range = request.headers["range"], range.hasPrefix("bytes="),
            case let bounds = range.dropFirst(6).split(separator: "-").compactMap({ Int($0) }), bounds.count == 2, bounds[1] < value.count else {
        return TestHTTPServer.Reply(body: value)
      }
      return TestHTTPServer.Reply(status: 206, headers: ["Content-Range": "bytes \(bounds[0])-\(bounds[1])/\(value.count)"],
                                  body: value[bounds[0]...bounds[1]])
    case "/header-name": return TestHTTPServer.Reply(headers: ["X-Echo-\(request.headers["x-key"] ?? "none")": "1"], body: Data("ok".utf8))
    case "/header-value": return TestHTTPServer.Reply(body: Data((request.headers["x-key"] ?? "none").utf8))
    case "/user-agent": return TestHTTPServer.Reply(body: Data((request.headers["user-agent"] ?? "none").utf8))
    case "/gzip": return TestHTTPServer.Reply(headers: ["Content-Encoding": "gzip"], body: Data(local.utf8))
    default: return .text("not here\n", status: 404)
    }
  }

  /// What the command tries to reach from inside: the canaries outside.
  struct Canaries {
    let port: Int
    let server: Process
    let input: Pipe
    let holder: Process
    let key: String

    init(id: Substring, sockets: [String]) throws {
      server = Process()
      server.executableURL = URL(filePath: "/usr/bin/env")
      server.arguments = ["python3", Paths.packageRoot.appending(path: "Tests/Peers/canary_server.py").path, "canary", "odr-canary-\(id)"] + sockets
      input = Pipe()
      let output = Pipe()
      server.standardInput = input
      server.standardOutput = output
      try server.run()
      guard let line = output.fileHandleForReading.readLine(), let port = Int(line) else { throw TestFailure("the canary server did not start") }
      self.port = port
      holder = Process()
      holder.executableURL = URL(filePath: "/usr/bin/env")
      holder.arguments = ["ENV-CANARY-\(id)=1", "sleep", "120"]
      try holder.run()
      let added = try Command.runBlocking("/usr/bin/keyctl", ["add", "user", "odr-canary-\(id)", "canary", "@u"])
      guard added.status == 0 else { throw TestFailure("keyctl add: \(added.stderr)") }
      key = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func stop() {
      try? input.fileHandleForWriting.close()  // the server ends when its stdin closes
      kill(holder.processIdentifier, SIGKILL)  // SIGTERM: blocked in a child of Foundation's Process (the test thread's mask)
      holder.waitUntilExit()
      _ = try? Command.runBlocking("/usr/bin/keyctl", ["unlink", key, "@u"])  // best effort: the key holds no secret
    }
  }

  /// What the rows run inside to try a socket, a port or TIOCSTI.
  static let probe = """
    import errno, fcntl, os, socket, sys, termios
    kind, target = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ""
    try:
        if kind == "tiocsti":
            master, slave = os.openpty()
            fcntl.ioctl(slave, termios.TIOCSTI, b"x")
            print("typed")
            sys.exit(0)
        if kind == "tcp":
            s = socket.create_connection(("127.0.0.1", int(target)), timeout=2)
        else:
            s = socket.socket(socket.AF_UNIX)
            s.settimeout(2)
            s.connect(("\\0" + target) if kind == "abstract" else target)
        print(s.recv(16).decode())
    except OSError as error:
        print(error.errno if kind == "tiocsti" else "refused")
    """
}
