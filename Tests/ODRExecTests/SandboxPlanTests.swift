import ODRBase
import Foundation
import ODRTesting
import Testing

@testable import ODRExec

/// The sandbox of `odr exec --proxy` as a value: the bwrap arguments it
/// renders, what it shows, and the plans it refuses to make.
@Suite struct SandboxPlanTests {
  static func plan(_ change: (inout SandboxPlan) -> Void = { _ in }) -> SandboxPlan {
    var plan = SandboxPlan(workingFolder: "/home/u/project", home: "/home/u", sandboxHome: "/home/u/.local/share/odr/homes/project-1", helper: "/usr/bin/odr")
    plan.sharedFromHome = [".gitconfig"]
    plan.listeners = ["127.0.0.1:3128"]
    plan.terminalSignals = [2, 3]
    change(&plan)
    return plan
  }

  @Test func theArgumentsDeclareEveryNamespaceTheMountsInOrderAndTheHelperFirst() {
    let startup: [String] = SandboxPlan.shellStartupFiles.flatMap { ["--ro-bind", "/dev/null", "/home/u/" + $0] }
    let expected: [String] = [
      "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-net", "--disable-userns", "--die-with-parent", "--new-session",
      "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
      "--tmpfs", "/tmp", "--tmpfs", "/var/tmp", "--tmpfs", "/dev/shm", "--tmpfs", "/run",
      "--bind", "/home/u/.local/share/odr/homes/project-1", "/home/u",
      "--ro-bind-try", "/home/u/.gitconfig", "/home/u/.gitconfig",
    ] + startup + [
      "--bind", "/home/u/project", "/home/u/project",
      "--ro-bind", "/home/u/project/.git", "/home/u/project/.git",
      "--ro-bind", "/usr/bin/odr", "/run/odr/odr", "--ro-bind-data", "6", "/run/odr/ca.pem",
      "--seccomp", "5", "--json-status-fd", "7", "--chdir", "/home/u/project", "--",
      "/run/odr/odr", "--sandbox-init", "--default-signals=2,3", "127.0.0.1:3128", "--", "/usr/bin/agent", "--flag",
    ]
    #expect(Self.plan().arguments(command: ["/usr/bin/agent", "--flag"]) == expected)
  }

  /// Each choice adds its own arguments in its place; none uses a `-try`
  /// form of a namespace.
  @Test(arguments: [
    ("a terminal", { @Sendable (plan: inout SandboxPlan) in plan.newSession = false }, ["--new-session"], [String]()),
    ("--allow-write .git", { $0.git = .writable }, ["--ro-bind", "/home/u/project/.git", "/home/u/project/.git"], []),
    ("no .git", { $0.git = .absent }, ["--ro-bind", "/home/u/project/.git", "/home/u/project/.git"],
     ["--tmpfs", "/home/u/project/.git", "--remount-ro", "/home/u/project/.git"]),
    ("--allow-read", { $0.readable = ["/opt/data"] }, [], ["--ro-bind", "/opt/data", "/opt/data"]),
    ("--allow-write", { $0.writable = ["/srv/out"] }, [], ["--bind", "/srv/out", "/srv/out"]),
    ("a covered folder", { $0.covered = [.folder("/srv/state/odr")] }, [], ["--tmpfs", "/srv/state/odr", "--remount-ro", "/srv/state/odr"]),
    ("a covered file", { $0.covered = [.file("/srv/id.txt")] }, [], ["--ro-bind", "/dev/null", "/srv/id.txt"]),
    ("a runtime folder outside /run", { $0.runtimeFolder = "/var/lib/rt" }, [], ["--tmpfs", "/var/lib/rt"]),
    ("a relayed name", { $0.relays = [try! SandboxPlan.relay("db.internal:5432", index: 0)] }, [], ["--ro-bind-data", "8", "/etc/hosts"]),
    ("odr started with SIGINT ignored", { $0.terminalSignals = [3] }, ["--default-signals=2,3"], ["--default-signals=3"]),
  ] as [(String, @Sendable (inout SandboxPlan) -> Void, [String], [String])])
  func aChoiceChangesOnlyItsArguments(_ choice: String, _ change: @Sendable (inout SandboxPlan) -> Void, removed: [String], added: [String]) {
    let before = Self.plan().arguments(command: ["/bin/true"]), after = Self.plan(change).arguments(command: ["/bin/true"])
    #expect(Self.contains(before, removed) && (removed.isEmpty || !Self.contains(after, removed)), "\(choice)")
    #expect(Self.contains(after, added) && (added.isEmpty || !Self.contains(before, added)), "\(choice)")
    #expect(!after.contains { $0.hasPrefix("--unshare") && $0.hasSuffix("-try") }, "\(choice)")
  }

  static func contains(_ list: [String], _ run: [String]) -> Bool {
    run.isEmpty || list.indices.contains { list[$0...].starts(with: run) }
  }

  @Test(arguments: [
    ("/home/u/project/src/main.swift", true), ("/home/u/project", true), ("/usr/bin/python3", true), ("/home/u/.gitconfig", true),
    ("/home/u/.ssh/id_ed25519", false), ("/home/u", false), ("/tmp/x", false), ("/run/user/1000/bus", false), ("/dev/shm/x", false),
    ("/home/u/project/.odr/state", false), ("/home/user2/file", true),
  ])
  func whatTheCommandSees(_ path: String, _ shown: Bool) {
    let plan = Self.plan { $0.covered = [.folder("/home/u/project/.odr")] }
    #expect(plan.showsAsIs(path) == shown)
  }

  @Test func theVariablesPointCachesIntoTheHomeAndTemporaryFilesIntoTheSandbox() {
    let variables = Self.plan().variables(over: ["HOME": "/home/u", "XDG_CACHE_HOME": "/srv/cache", "GOCACHE": "/srv/go", "PATH": "/usr/bin", "TMPDIR": "/srv/tmp"])
    #expect(variables["XDG_CACHE_HOME"] == "/home/u/.cache" && variables["GOCACHE"] == "/home/u/.cache/go-build" && variables["npm_config_cache"] == "/home/u/.npm")
    #expect(variables["TMPDIR"] == "/tmp" && variables["PATH"] == "/usr/bin" && variables["HOME"] == "/home/u")
  }

  @Test(arguments: [("/home/u/code/odr", "odr-"), ("/", "root-"), ("/srv/a b!c", "abc-")])
  func aHomeIsNamedAfterItsWorkingFolder(_ folder: String, _ prefix: String) {
    let name = SandboxPlan.defaultHomeName(for: folder)
    #expect(name.hasPrefix(prefix) && name.count == prefix.count + 16 && name != SandboxPlan.defaultHomeName(for: folder + "x"))
    #expect(throws: Never.self) { try SandboxPlan.checkedHomeName(name) }
  }

  @Test(arguments: ["", ".hidden", "a/b", "../x", String(repeating: "a", count: 65), "é"])
  func aHomeNameIsAPlainName(_ name: String) {
    #expect(throws: ExecError.self) { try SandboxPlan.checkedHomeName(name) }
  }

  /// make: a real home and working folder; odr's folders found where the
  /// command would see them are covered (others are hidden already); the
  /// home is made 0700.
  @Test func aPlanCoversOdrsFoldersWhereTheCommandWouldSeeThem() throws {
    let root = URL(filePath: CommandRunner.realPath(FileManager.default.temporaryDirectory.path)!).appending(path: "odr-plan-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    let (home, work) = (root.appending(path: "home"), root.appending(path: "home/project"))
    for folder in [work.appending(path: ".cache/odr"), root.appending(path: "state/odr"), work.appending(path: ".git")] {
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }
    try Data("AGE-SECRET-KEY-1".utf8).write(to: work.appending(path: "id.txt"))
    var request = SandboxPlan.Request(workingFolder: work.path, environment: ["HOME": home.path, "XDG_CACHE_HOME": work.appending(path: ".cache").path,
                                                                             "XDG_STATE_HOME": root.appending(path: "state").path], helper: "/bin/sh")
    request.identityFiles = ["id.txt"]
    request.writable = [".git"]
    let plan = try SandboxPlan.make(request)
    // The state folder is under the private TMPDIR (/dev/shm, /tmp): hidden already, not covered again.
    #expect(plan.covered == [.folder(work.appending(path: ".cache/odr").path), .file(work.appending(path: "id.txt").path)])
    #expect(plan.git == .writable && plan.writable.isEmpty && plan.helper == CommandRunner.realPath("/bin/sh"))
    let mode = try FileManager.default.attributesOfItem(atPath: plan.sandboxHome)[.posixPermissions] as? Int
    #expect(plan.sandboxHome.hasPrefix(home.path + "/.local/share/odr/homes/project-") && mode == 0o700)
  }

  /// `--allow-connect`: where each destination listens inside, and the
  /// ones a sandbox cannot listen for.
  @Test(arguments: [
    ("db.internal:5432", 0, "127.0.0.10:5432", "db.internal"), ("db.internal:5432", 3, "127.0.0.13:5432", "db.internal"),
    ("localhost:6379", 0, "127.0.0.1:6379", nil), ("127.0.0.2:8080", 1, "127.0.0.2:8080", nil),
  ] as [(String, Int, String, String?)])
  func aRelayListensWhereTheCommandLooks(_ given: String, _ index: Int, _ listener: String, _ name: String?) throws {
    let relay = try SandboxPlan.relay(given, index: index)
    #expect(relay.listener == listener && relay.name == name && "\(relay.host):\(relay.port)" == given)
  }

  @Test(arguments: ["github.com:22", "10.0.0.5:5432", "db.internal", "db.internal:0", "db.internal:70000", "DB:5432", "[::1]:5432"])
  func aRelayTheSandboxCannotListenForIsRefused(_ given: String) {
    #expect(throws: ExecError.self) { try SandboxPlan.relay(given, index: 0) }
  }

  @Test func theHostsFileAddsTheRelayedNames() throws {
    let plan = Self.plan { $0.relays = [try! SandboxPlan.relay("db.internal:5432", index: 0), try! SandboxPlan.relay("localhost:6379", index: 1)] }
    #expect(plan.hostsFile)
    #expect(plan.hosts(appendingTo: "127.0.0.1 localhost\n") == "127.0.0.1 localhost\n# odr exec --proxy --allow-connect\n127.0.0.10 db.internal\n")
    #expect(!Self.plan { $0.relays = [try! SandboxPlan.relay("localhost:6379", index: 0)] }.hostsFile)
  }

  /// Links a command may plant for the next run: a `.git` link is refused,
  /// a link through which `--allow-write`/`--allow-read` would reach
  /// elsewhere is refused, and links in the sandbox's home where odr mounts
  /// are removed (bwrap would follow them to make mount points on the
  /// machine).
  @Test func linksACommandPlantedAreRefusedOrRemoved() throws {
    let root = URL(filePath: CommandRunner.realPath(FileManager.default.temporaryDirectory.path)!).appending(path: "odr-links-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    let (home, work) = (root.appending(path: "home"), root.appending(path: "home/project"))
    for folder in [work, home.appending(path: ".ssh"), home.appending(path: ".local/bin")] {
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }
    let request = SandboxPlan.Request(workingFolder: work.path, environment: ["HOME": home.path], helper: "/bin/sh")
    // The command's home, made by a first run, then links planted in it.
    let first = try SandboxPlan.make(request)
    #expect(first.git == .absent && first.removedLinks.isEmpty)
    let planted = URL(filePath: first.sandboxHome)
    try FileManager.default.createSymbolicLink(atPath: planted.appending(path: ".local").path, withDestinationPath: "/oldroot" + home.appending(path: ".ssh").path)
    try FileManager.default.createSymbolicLink(atPath: planted.appending(path: ".bashrc").path, withDestinationPath: "/tmp/x")
    let second = try SandboxPlan.make(request)
    #expect(Set(second.removedLinks) == [".local", ".bashrc"], "\(second.removedLinks)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: first.sandboxHome).isEmpty)
    // In the working folder: a link to the home through --allow-write, and a .git link.
    try FileManager.default.createSymbolicLink(atPath: work.appending(path: "build").path, withDestinationPath: home.appending(path: ".ssh").path)
    var writing = request
    writing.writable = ["build"]
    let refused = #expect(throws: ExecError.self) { try SandboxPlan.make(writing) }
    #expect(refused?.message.contains("is a symbolic link in the working folder") == true, "\(refused?.message ?? "")")
    try FileManager.default.createSymbolicLink(atPath: work.appending(path: ".git").path, withDestinationPath: "../..")
    let git = #expect(throws: ExecError.self) { try SandboxPlan.make(request) }
    #expect(git?.message.contains("The working folder's .git is a symbolic link") == true, "\(git?.message ?? "")")
  }

  /// bwrap's exit code and status line become the command's wait status.
  @Test(arguments: [
    (0, "{ \"child-pid\": 5 }\n{ \"exit-code\": 3 }\n", 0, 3 << 8),
    (1 << 8, "{ \"child-pid\": 5 }\n", 0, 1 << 8),
    (143 << 8, "{ \"exit-code\": 143 }\n", 15, 15),
    (143 << 8, "{ \"exit-code\": 143 }\n", 2, 143 << 8),
    (9, "", 0, 137 << 8),
  ] as [(Int32, String, Int32, Int32)])
  func theCommandsStatusComesFromBwrapsStatusLine(bwrap: Int32, reported: String, forwarded: Int32, expected: Int32) {
    #expect(CommandRunner.commandStatus(bwrap: bwrap, reported: reported, forwarded: forwarded) == expected)
  }
}
