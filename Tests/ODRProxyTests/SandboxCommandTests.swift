import Foundation
import ODRCLITesting
import ODRTesting
import Testing

/// The sandbox of `odr exec --proxy` as a user meets it, with the built
/// binary as an ordinary user: the home it keeps, the folders it refuses,
/// and what happens where it cannot be made (fail closed: exit 11).
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct SandboxCommandTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-sandbox-\(UUID().uuidString)")
  var home: URL { root.appending(path: "home") }
  var work: URL { home.appending(path: "project") }

  /// One key bound to a host (the run needs one), stored with the CLI.
  func environment() async throws -> [String: String] {
    let bundle = "com.odr.sandbox.\(UUID().uuidString.prefix(8).lowercased())"
    var env = KeyringSession.shared.environment
    env["HOME"] = home.path
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    env["XDG_DATA_HOME"] = nil
    env["ODR_SERVICE"] = bundle
    env["TMPDIR"] = root.path
    for folder in [work, root.appending(path: "src")] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
    try Data("# the user's own\n".utf8).write(to: home.appending(path: ".bashrc"))
    try Data(#"{"bundle": "\#(bundle)", "tags": {"APIKeys": {"category": "prefetch", "secrets": true, "files": ["APIKeys.json"]}}}"#.utf8)
      .write(to: root.appending(path: "src/tags.json"))
    try Data(#"{"keys": {"Weather": {"value": "w-\#(UUID().uuidString)", "header": "X-Key", "hosts": ["api.example"]}}}"#.utf8)
      .write(to: root.appending(path: "src/APIKeys.json"))
    for arguments in [["pack", root.appending(path: "src").path, "--output", root.appending(path: "pub").path, "--quiet", "--plaintext-secrets"],
                      ["fetch", "APIKeys", "--catalog", root.appending(path: "pub").path, "--quiet"]] {
      let result = try await Command.odr(arguments, environment: env)
      try #require(result.status == 0, "\(result.stderr)")
    }
    return env
  }

  /// A stub agent keeps its settings and caches in the sandbox's home
  /// between runs; the real home is unchanged.
  @Test func anAgentKeepsItsStateInAHomeOfItsOwnAndTheRealHomeIsUnchanged() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let env = try await environment()
    let before = try snapshot(home, skipping: ".local/share/odr")
    let agent = """
      mkdir -p ~/.cache ~/.npm ~/.agent && echo cached > ~/.cache/x && echo npm > ~/.npm/x && echo '{"turn": 1}' > ~/.agent/state.json \
        && echo "$XDG_CACHE_HOME $TMPDIR" && echo wrote
      """
    let first = try await Command.odr(["exec", "--proxy", "--", "/bin/sh", "-c", agent], environment: env, in: work)
    #expect(first.status == 0 && first.stdout == "\(home.path)/.cache /tmp\nwrote\n", "\(first.stdout)\(first.stderr)")
    let second = try await Command.odr(["exec", "--proxy", "--", "/bin/sh", "-c", "cat ~/.cache/x ~/.npm/x ~/.agent/state.json"], environment: env, in: work)
    #expect(second.stdout == "cached\nnpm\n{\"turn\": 1}\n", "\(second.stdout)\(second.stderr)")
    // Another home name: another home.
    let other = try await Command.odr(["exec", "--proxy", "--home", "other", "--", "/bin/sh", "-c", "cat ~/.cache/x 2>&1 || echo none"], environment: env, in: work)
    #expect(other.stdout.hasSuffix("none\n"), "\(other.stdout)")
    #expect(try snapshot(home, skipping: ".local/share/odr") == before)
    let homes = try FileManager.default.contentsOfDirectory(atPath: home.appending(path: ".local/share/odr/homes").path).sorted()
    #expect(homes.count == 2 && homes.contains("other") && homes.contains { $0.hasPrefix("project-") }, "\(homes)")
  }

  @Test func aWorkingFolderThatIsTheHomeOrAboveIsRefused() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let env = try await environment()
    for folder in [home, root] {
      let result = try await Command.odr(["exec", "--proxy", "--", "/bin/echo", "ran"], environment: env, in: folder)
      #expect(result.status == 2 && result.stdout.isEmpty && result.stderr.contains("does not run a command in"), "\(result.stderr)")
    }
    let git = try await Command.odr(["exec", "--proxy", "--allow-write", "..", "--", "/bin/echo", "ran"], environment: env, in: work)
    #expect(git.status == 2 && git.stderr.contains("is your home or above it"), "\(git.stderr)")
  }

  /// Where no user namespace can be made (a namespace whose
  /// user.max_user_namespaces is 0, as a container's seccomp profile or
  /// Ubuntu's AppArmor default leave it), the command does not run.
  @Test func withoutUserNamespacesTheCommandDoesNotRunUnlessAskedTo() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let env = try await environment()
    let odr = Paths.odr.path
    func run(_ arguments: String) async throws -> Command.Result {
      try await Command.run("/usr/bin/unshare", ["--user", "--map-root-user", "/bin/sh", "-c",
                                                 "echo 0 > /proc/sys/user/max_user_namespaces && cd '\(work.path)' && exec '\(odr)' exec --proxy \(arguments) -- /bin/echo ran"],
                            environment: env)
    }
    let refused = try await run("")
    #expect(refused.status == 11 && refused.stdout.isEmpty, "\(refused.stdout)\(refused.stderr)")
    #expect(refused.stderr.contains("The command's sandbox could not be made, so the command was not run")
            && refused.stderr.contains("User namespaces are not available") && refused.stderr.contains("--no-sandbox"), "\(refused.stderr)")
    let knowingly = try await run("--no-sandbox")
    #expect(knowingly.status == 0 && knowingly.stdout == "ran\n", "\(knowingly.stderr)")
    #expect(knowingly.stderr.contains("the command runs without a sandbox (--no-sandbox): it can read your files, reach your session's D-Bus"))
  }

  /// Without bubblewrap the command does not run either, and the message
  /// says how to install it.
  @Test func withoutBubblewrapTheCommandDoesNotRun() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    var env = try await environment()
    env["PATH"] = "/bin"
    let result = try await Command.run("/usr/bin/unshare", ["--user", "--map-root-user", "--mount", "/bin/sh", "-c",
                                                            "mount --bind /dev/null /usr/bin/bwrap && cd '\(work.path)' && exec '\(Paths.odr.path)' exec --proxy -- /bin/echo ran"],
                                       environment: env)
    #expect(result.status == 11 && result.stdout.isEmpty, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains("bubblewrap (bwrap), which is not installed") && result.stderr.contains("sudo apt install bubblewrap"), "\(result.stderr)")
  }

  /// What a command plants for the next run does not reach further: in a
  /// working folder without a `.git`, none can be made (git would find it
  /// when you next run it there), and nothing of it stays; a link it leaves
  /// in its home where odr mounts a folder is removed before the next run
  /// (bubblewrap would follow it to make a mount point on the machine).
  @Test func whatACommandPlantsForTheNextRunDoesNotReachFurther() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let env = try await environment()
    for folder in [home.appending(path: ".local/bin"), home.appending(path: ".ssh")] {
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }
    let plant = """
      ln -s ../.. .git 2>/dev/null && echo ".git planted" || echo ".git refused"
      git init -q 2>/dev/null && echo "git init" || echo "git init refused"
      mv ~/.local ~/.local-moved && ln -s /oldroot\(home.path)/.ssh ~/.local && echo "link planted"
      """
    let first = try await Command.odr(["exec", "--proxy", "--", "/bin/sh", "-c", plant], environment: env, in: work)
    #expect(first.stdout == ".git refused\ngit init refused\nlink planted\n", "\(first.stdout)\(first.stderr)")
    #expect(!FileManager.default.fileExists(atPath: work.appending(path: ".git").path), "the stand-in for .git is left behind")
    let second = try await Command.odr(["exec", "--proxy", "--", "/bin/sh", "-c", "ls -A ~/.local"], environment: env, in: work)
    #expect(second.status == 0 && second.stderr.contains("removed symbolic links a command had left in the sandbox's home where odr mounts folders: .local"),
            "\(second.stderr)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: home.appending(path: ".ssh").path).isEmpty)
  }

  /// `--allow-connect`: a service outside that does not speak HTTP,
  /// reached inside at its name and port, carried untouched; without it,
  /// nothing.
  @Test func anAllowedDestinationIsRelayedAsPlainTCP() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let env = try await environment()
    let server = Process()
    server.executableURL = URL(filePath: "/usr/bin/env")
    server.arguments = ["python3", "-c", """
      import socket, sys
      s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(4); print(s.getsockname()[1], flush=True)
      for _ in range(2):
          c, _ = s.accept(); c.sendall(b"hello " + c.recv(16)); c.close()
      """]
    let output = Pipe()
    server.standardOutput = output
    try server.run()
    // SIGKILL: a child of Foundation's Process inherits the test thread's blocked signals, SIGTERM among them.
    defer { kill(server.processIdentifier, SIGKILL); server.waitUntilExit() }
    let port = try #require(output.fileHandleForReading.readLine().flatMap(Int.init))
    let client = #"python3 -c 'import socket, sys; s = socket.create_connection(("localhost", int(sys.argv[1])), timeout=3); s.sendall(b"odr"); print(s.recv(32).decode())' "#
    let relayed = try await Command.odr(["exec", "--proxy", "--allow-connect", "localhost:\(port)", "--", "/bin/sh", "-c", client + "\(port)"],
                                        environment: env, in: work)
    #expect(relayed.status == 0 && relayed.stdout == "hello odr\n", "\(relayed.stdout)\(relayed.stderr)")
    let alone = try await Command.odr(["exec", "--proxy", "--", "/bin/sh", "-c", client + "\(port) 2>/dev/null || echo refused"], environment: env, in: work)
    #expect(alone.stdout == "refused\n", "\(alone.stdout)\(alone.stderr)")
    let low = try await Command.odr(["exec", "--proxy", "--allow-connect", "github.com:22", "--", "/bin/true"], environment: env, in: work)
    #expect(low.status == 2 && low.stderr.contains("cannot listen on a port below 1024"), "\(low.stderr)")
  }

  /// Every file below `folder` with its contents, but those below `skipping`.
  func snapshot(_ folder: URL, skipping: String) throws -> [String: Data] {
    var files: [String: Data] = [:]
    for case let path as String in FileManager.default.enumerator(atPath: folder.path) ?? NSEnumerator() where !path.hasPrefix(skipping) {
      var isFolder: ObjCBool = false
      guard FileManager.default.fileExists(atPath: folder.appending(path: path).path, isDirectory: &isFolder), !isFolder.boolValue else { continue }
      files[path] = try Data(contentsOf: folder.appending(path: path))
    }
    return files
  }
}
