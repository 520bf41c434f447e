import FoundationEssentials
import ODRBase
import ODRKeyFormat
#if canImport(Glibc)
import Glibc
#endif

/// The sandbox `odr exec --proxy` runs its command in, as one value:
/// what the command sees, what it may write, and how bubblewrap starts it.
/// ``arguments(command:)`` renders it as bwrap's argument list — the one
/// place that list is made — and ``variables(over:)`` as the variables the
/// command's environment gets. Both are pure; ``make(_:)`` builds a plan
/// from the user's paths and refuses the ones no sandbox should take.
///
/// The command gets its own user, PID, IPC, network and mount namespaces
/// (no `-try` forms: no namespace, no command), cannot make user
/// namespaces of its own, dies with odr, and runs under a seccomp program
/// (`SeccompProgram`). Everything is read-only but its working folder
/// (whose `.git` is read-only too) and a home of its own that odr keeps
/// per name, mounted where the user's home is; `/tmp`, `/var/tmp`,
/// `/dev/shm`, `/run` and the runtime folder are private and empty, so no
/// socket of the user's session is reachable; odr's own folders and the
/// identity files are covered. Its only network is its own loopback, where
/// odr listens (the sockets the first process hands over).
public struct SandboxPlan: Sendable, Equatable {
  /// A path the sandbox covers: a folder with an empty tmpfs, a file with
  /// an empty read-only file.
  public enum Covered: Sendable, Equatable {
    case folder(String)
    case file(String)

    public var path: String {
      switch self {
      case .folder(let path), .file(let path): path
      }
    }
  }

  /// The working folder (real path): visible at its own path, writable.
  public var workingFolder: String
  /// The user's home (real path), where ``sandboxHome`` is mounted.
  public var home: String
  /// The sandbox's own home, a folder odr keeps (`homeFolder(name:environment:)`).
  public var sandboxHome: String
  /// Paths under the user's home shown read-only in the sandbox's own,
  /// relative to it (those that exist: `--ro-bind-try`).
  public var sharedFromHome: [String] = Self.sharedFromHome
  /// More paths the command may read (`--allow-read`), real paths.
  public var readable: [String] = []
  /// More paths the command may write (`--allow-write`), real paths.
  public var writable: [String] = []
  /// What the working folder's `.git` is, and so what covers it.
  public enum Git: Sendable, Equatable {
    /// A repository (a folder) or a worktree's pointer (a file): shown read-only.
    case present
    /// None: an empty read-only folder stands there, so the command cannot
    /// make one (with hooks) for git to find when you next run it there.
    case absent
    /// `--allow-write .git`: as it is, writable.
    case writable
  }

  /// The working folder's `.git`.
  public var git = Git.present
  /// What is covered: odr's folders and identity files where the command
  /// could otherwise see them.
  public var covered: [Covered] = []
  /// Symbolic links odr removed from the sandbox's home before the run
  /// (relative to it): a command planted them where a mount point goes.
  public var removedLinks: [String] = []
  /// The runtime folder when it is not under `/run` (covered too).
  public var runtimeFolder: String?
  /// A session of the command's own (`--new-session`): only when its
  /// standard input is not a terminal, where it would break job control.
  public var newSession = true
  /// Where the first process listens, `127.0.0.1:PORT`: the proxy first.
  public var listeners: [String] = []
  /// The terminal's signals bwrap is started with ignored: Ctrl-C must
  /// reach the command, not end bwrap's monitor (and the sandbox with it).
  public static let ignoredByBubblewrap = [SIGINT, SIGQUIT]
  /// Those of ``ignoredByBubblewrap`` the first process puts back to
  /// their default action for the command (not those odr itself was
  /// started with ignored).
  public var terminalSignals: [Int32] = Self.ignoredByBubblewrap
  /// The destinations of `--allow-connect`, relayed from a listener inside
  /// (after the proxy's in ``listeners``) to their host and port outside.
  public var relays: [Relay] = []
  /// Whether an `/etc/hosts` of the run's own is given (``Descriptor/hosts``):
  /// a relayed name resolves inside to the loopback address it listens on.
  public var hostsFile: Bool { relays.contains { $0.name != nil } }

  /// One `--allow-connect HOST:PORT`.
  public struct Relay: Sendable, Equatable {
    /// Where it listens inside, `127.0.0.N:PORT`.
    public var listener: String
    /// The host name the sandbox's /etc/hosts maps to the listener's
    /// address (nil for a loopback host, which is already one).
    public var name: String?
    /// Where its connections go, outside.
    public var host: String
    public var port: Int
  }

  /// The sandbox's `/etc/hosts`: the machine's, then each relayed name.
  public func hosts(appendingTo original: String) -> String {
    let entries = relays.compactMap { relay in relay.name.map { "\(relay.listener.split(separator: ":")[0]) \($0)" } }
    return original + (original.hasSuffix("\n") || original.isEmpty ? "" : "\n") + "# odr exec --proxy --allow-connect\n"
      + entries.joined(separator: "\n") + "\n"
  }
  /// odr's own executable (outside), which starts the sandbox's first process.
  public var helper: String

  /// Paths of the user's home the sandbox's home shows, read-only, when
  /// they exist: git's identity and settings, and the folders toolchains
  /// and agents install themselves in (their programs run; nothing the
  /// command writes lands there).
  public static let sharedFromHome = [
    ".gitconfig", ".config/git", ".local/bin", ".local/lib", ".nvm", ".volta", ".bun", ".deno", ".cargo/bin", ".rustup",
    ".pyenv", ".sdkman", ".asdf", "go/bin",
  ]

  /// The shells' start-up files of the sandbox's home: empty and
  /// read-only, so that nothing the command writes there runs in a shell
  /// started later (a planted `~/.bashrc` is the classic foothold).
  public static let shellStartupFiles = [".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin"]

  /// Where the sandbox finds odr's helper, the run's CA bundle and its hosts file.
  public static let helperPath = "/run/odr/odr"
  public static let caBundlePath = "/run/odr/ca.pem"

  /// The descriptors bwrap is given, in the order they are placed (3, 4, …).
  public enum Descriptor: Int32, Sendable, CaseIterable {
    /// The socket the first process's message comes back on.
    case control = 3
    /// The standard error the command gets (bwrap's own goes to odr).
    case error = 4
    /// The seccomp program (`--seccomp`).
    case seccomp = 5
    /// The run's CA bundle (`--ro-bind-data`, at ``caBundlePath``).
    case caBundle = 6
    /// bwrap's status lines (`--json-status-fd`).
    case status = 7
    /// The hosts file (`--ro-bind-data`, at /etc/hosts), with ``hostsFile``.
    case hosts = 8
  }

  public init(workingFolder: String, home: String, sandboxHome: String, helper: String) {
    self.workingFolder = workingFolder
    self.home = home
    self.sandboxHome = sandboxHome
    self.helper = helper
  }

  /// bwrap's arguments for running `command` (an absolute path first).
  public func arguments(command: [String]) -> [String] {
    var list = ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-net", "--disable-userns", "--die-with-parent"]
    if newSession { list.append("--new-session") }
    list += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for folder in ["/tmp", "/var/tmp", "/dev/shm", "/run"] + (runtimeFolder.map { [$0] } ?? []) { list += ["--tmpfs", folder] }
    list += ["--bind", sandboxHome, home]
    for path in sharedFromHome { list += ["--ro-bind-try", home + "/" + path, home + "/" + path] }
    for file in Self.shellStartupFiles { list += ["--ro-bind", "/dev/null", home + "/" + file] }
    for path in readable { list += ["--ro-bind", path, path] }
    list += ["--bind", workingFolder, workingFolder]
    switch git {
    case .present: list += ["--ro-bind", workingFolder + "/.git", workingFolder + "/.git"]
    case .absent: list += ["--tmpfs", workingFolder + "/.git", "--remount-ro", workingFolder + "/.git"]
    case .writable: break
    }
    for path in writable { list += ["--bind", path, path] }
    for path in covered {
      switch path {
      case .folder(let folder): list += ["--tmpfs", folder, "--remount-ro", folder]
      case .file(let file): list += ["--ro-bind", "/dev/null", file]
      }
    }
    list += ["--ro-bind", helper, Self.helperPath, "--ro-bind-data", "\(Descriptor.caBundle.rawValue)", Self.caBundlePath]
    if hostsFile { list += ["--ro-bind-data", "\(Descriptor.hosts.rawValue)", "/etc/hosts"] }
    list += ["--seccomp", "\(Descriptor.seccomp.rawValue)", "--json-status-fd", "\(Descriptor.status.rawValue)", "--chdir", workingFolder, "--"]
    let defaults = terminalSignals.isEmpty ? [] : ["--default-signals=" + terminalSignals.map(String.init).joined(separator: ",")]
    return list + [Self.helperPath, "--sandbox-init"] + defaults + listeners + ["--"] + command
  }

  /// `environment` as the command gets it in the sandbox: a private `/tmp`
  /// for temporary files, and the cache, configuration, data and state
  /// variables of the usual tools pointing into its own home.
  public func variables(over environment: [String: String]) -> [String: String] {
    var result = environment
    result["HOME"] = home
    result["TMPDIR"] = "/tmp"
    for (name, relative) in Self.homeVariables { result[name] = home + "/" + relative }
    return result
  }

  /// Variables that name where tools keep caches and state, pointed into
  /// the sandbox's home (a value the user set elsewhere would be read-only
  /// there).
  public static let homeVariables: [(String, String)] = [
    ("XDG_CACHE_HOME", ".cache"), ("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share"), ("XDG_STATE_HOME", ".local/state"),
    ("GOCACHE", ".cache/go-build"), ("GOPATH", "go"), ("GOMODCACHE", "go/pkg/mod"), ("npm_config_cache", ".npm"),
    ("YARN_CACHE_FOLDER", ".cache/yarn"), ("PIP_CACHE_DIR", ".cache/pip"), ("CARGO_HOME", ".cargo"), ("GRADLE_USER_HOME", ".gradle"),
  ]

  /// Undoes what the run left in the working folder: the empty folder
  /// that stood for an absent `.git` (if it is still empty).
  public func cleanUp() {
    if git == .absent { rmdir(workingFolder + "/.git") }
  }

  /// Whether the command sees `path` (a real path) as it is outside: not
  /// under the home it does not see, a private folder, or a covered path.
  public func showsAsIs(_ path: String) -> Bool {
    let mounts = [workingFolder] + readable + writable + sharedFromHome.map { home + "/" + $0 }
    let covers = covered.map(\.path)
    if mounts.contains(where: { Self.path(path, isWithin: $0) }) { return !covers.contains { Self.path(path, isWithin: $0) } }
    let hiddenRoots = [home, "/tmp", "/var/tmp", "/dev/shm", "/run", "/proc", "/dev"] + (runtimeFolder.map { [$0] } ?? []) + covers
    return !hiddenRoots.contains { Self.path(path, isWithin: $0) }
  }

  /// Whether `path` is `folder` or below it (both absolute, without a final `/`).
  public static func path(_ path: String, isWithin folder: String) -> Bool {
    path == folder || folder == "/" || path.hasPrefix(folder + "/")
  }
}

extension SandboxPlan {
  /// What a plan is made from: the user's paths and choices.
  public struct Request: Sendable {
    /// The folder the command runs in.
    public var workingFolder: String
    /// odr's environment (HOME and the XDG folders are read from it).
    public var environment: [String: String]
    /// `--home NAME`; nil: a name derived from the working folder.
    public var homeName: String?
    /// `--allow-read` and `--allow-write`, as given (relative to the working folder).
    public var readable: [String] = []
    public var writable: [String] = []
    /// Identity files odr was given (covered where the command could see them).
    public var identityFiles: [String] = []
    /// Whether odr's standard input is a terminal (no session of its own then).
    public var standardInputIsTerminal = false
    /// odr's executable.
    public var helper: String
    /// Where the first process listens for the proxy.
    public var listeners: [String] = []
    /// `--allow-connect`, as given (`HOST:PORT`).
    public var connects: [String] = []

    public init(workingFolder: String, environment: [String: String], helper: String) {
      self.workingFolder = workingFolder
      self.environment = environment
      self.helper = helper
    }
  }

  /// The plan for `request`, its home made if it is new (0700, under
  /// `$XDG_DATA_HOME/odr/homes/`). Refuses a working folder that is the
  /// home or above it (the command would see and write all of it), paths
  /// to show that do not exist, and a home name that is not a plain name.
  public static func make(_ request: Request) throws -> SandboxPlan {
    let environment = request.environment
    guard let given = environment["HOME"], given.hasPrefix("/"), let home = CommandRunner.realPath(given) else {
      throw ExecError(.invalidInput, "odr exec --proxy needs HOME, an existing absolute folder: the sandbox mounts a home of its own there.")
    }
    guard let work = CommandRunner.realPath(request.workingFolder) else {
      throw ExecError(.invalidInput, "The working folder \(request.workingFolder) cannot be resolved: \(String(cString: strerror(errno))).")
    }
    if path(home, isWithin: work) {
      throw ExecError(.invalidInput, """
        odr exec --proxy does not run a command in \(work == home ? "your home" : work) (\(work == home ? home : "above your home, \(home)")): \
        the command could write everything below it, dotfiles included. cd into the project's folder first.
        """)
    }
    let name = try request.homeName.map(checkedHomeName) ?? defaultHomeName(for: work)
    let data = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.local/share"
    let homes = URL(filePath: data).appending(path: "odr/homes")
    let sandboxHome = homes.appending(path: name)
    do {
      try PrivateFolder.make(sandboxHome)
    } catch {
      throw ExecError(.io, "Cannot make the sandbox's home \(sandboxHome.path): \(error.message)", underlying: error)
    }
    guard let helper = CommandRunner.realPath(request.helper) else {
      throw ExecError(.io, "Cannot find odr's own executable (\(request.helper)) to start the sandbox with.")
    }
    var plan = SandboxPlan(workingFolder: work, home: home, sandboxHome: CommandRunner.realPath(sandboxHome.path) ?? sandboxHome.path, helper: helper)
    plan.newSession = !request.standardInputIsTerminal
    plan.terminalSignals = ignoredByBubblewrap.filter { !CommandRunner.inheritedIgnored($0) }
    plan.relays = try request.connects.enumerated().map { try relay($1, index: $0) }
    plan.listeners = request.listeners + plan.relays.map(\.listener)
    if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/"), !path(runtime, isWithin: "/run"),
       let resolved = CommandRunner.realPath(runtime) {
      plan.runtimeFolder = resolved
    }
    for given in request.readable {
      plan.readable.append(try resolved(given, in: work, option: "--allow-read"))
    }
    for given in request.writable {
      if (given.hasPrefix("/") ? given : work + "/" + given) == work + "/.git" {
        plan.git = .writable  // as it is, or none yet: the command may make it
        continue
      }
      let writable = try resolved(given, in: work, option: "--allow-write")
      if path(home, isWithin: writable) {
        throw ExecError(.invalidInput, "--allow-write \(given): \(writable) is your home or above it; name the folder the command must write.")
      }
      plan.writable.append(writable)
    }
    if plan.git != .writable {
      var info = stat()
      if lstat(work + "/.git", &info) != 0 {
        plan.git = .absent
      } else if info.st_mode & S_IFMT == S_IFLNK {
        throw ExecError(.invalidInput, """
          The working folder's .git is a symbolic link (to \(CommandRunner.realPath(work + "/.git") ?? "nothing")): odr does not run a sandboxed \
          command beside one, since a command can plant it to be shown a folder it could not reach. Replace it with the repository, or remove it.
          """)
      }
    }
    plan.removedLinks = try unlinkPlantedLinks(in: plan)
    // odr's own folders and the identity files, wherever the command could see them.
    let folders = XDGFolders(environment: environment)
    let config = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.config"
    let candidates = [folders.stateHome.appending(path: "odr").path, folders.cacheHome.appending(path: "odr").path, config + "/odr",
                      data + "/keyrings", homes.path] + request.identityFiles.map { $0.hasPrefix("/") ? $0 : work + "/" + $0 }
    for candidate in candidates {
      var info = stat()
      guard let real = CommandRunner.realPath(candidate), stat(real, &info) == 0, plan.showsAsIs(real) else { continue }
      plan.covered.append(info.st_mode & S_IFMT == S_IFDIR ? .folder(real) : .file(real))
    }
    return plan
  }

  /// The relay of `--allow-connect HOST:PORT` (the `index`th): a loopback
  /// host listens at its own address, a name at `127.0.0.(10 + index)`,
  /// which the sandbox's /etc/hosts gives it. The port must be one an
  /// unprivileged sandbox can listen on (1024 and above); an address that
  /// is not loopback has nowhere to listen inside (name it instead).
  public static func relay(_ given: String, index: Int) throws -> Relay {
    let parts = given.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 2, let port = Int(parts[1]), (1...65535).contains(port), let host = KeyHost(String(parts[0])), host.port == nil else {
      throw ExecError(.invalidInput, "--allow-connect \(given): name a host and a port, such as db.internal:5432 or localhost:6379.")
    }
    guard port >= 1024 else {
      throw ExecError(.invalidInput, """
        --allow-connect \(given): a sandbox without privileges cannot listen on a port below 1024, so a client inside could not \
        connect to \(host.name):\(port). Reach such a service over HTTP(S) through the proxy (git: an https remote with a token), or \
        through a port of 1024 or above.
        """)
    }
    let isIPv4 = host.name.split(separator: ".").count == 4 && host.name.allSatisfy { $0.isNumber || $0 == "." }
    if Origin.isLoopback(host.name) {
      return Relay(listener: "\(isIPv4 ? host.name : "127.0.0.1"):\(port)", name: nil, host: host.name, port: port)
    }
    guard !isIPv4 else {
      throw ExecError(.invalidInput, "--allow-connect \(given): the sandbox has only its own loopback, where \(host.name) cannot be listened on; name the host instead (db.internal:\(port)).")
    }
    guard index < 200 else { throw ExecError(.invalidInput, "--allow-connect: at most 200 destinations.") }
    return Relay(listener: "127.0.0.\(10 + index):\(port)", name: host.name, host: host.name, port: port)
  }

  /// The home name of a working folder: its last component (letters,
  /// digits, `.`, `_`, `-` kept) and a hash of its whole path.
  public static func defaultHomeName(for folder: String) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a
    for byte in folder.utf8 {
      hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
    }
    let last = folder.split(separator: "/").last.map { $0.filter { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) } } ?? ""
    let hex = String(hash, radix: 16)
    return (last.isEmpty ? "root" : String(last.prefix(40))) + "-" + String(repeating: "0", count: 16 - hex.count) + hex
  }

  /// `name` if it is a plain name for a home: letters, digits, `.`, `_`
  /// and `-`, not starting with `.`, at most 64 characters.
  static func checkedHomeName(_ name: String) throws -> String {
    guard !name.isEmpty, name.utf8.count <= 64, !name.hasPrefix("."),
          name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }) else {
      throw ExecError(.invalidInput, "--home \(name): a home's name is letters, digits, '.', '_' and '-', at most 64, not starting with '.'.")
    }
    return name
  }

  /// `given` (relative to the working folder) as a real path. A path
  /// through a symbolic link inside the working folder is refused: the
  /// command may have planted it to be shown (or given to write) a folder
  /// of your home.
  private static func resolved(_ given: String, in work: String, option: String) throws -> String {
    let absolute = given.hasPrefix("/") ? given : work + "/" + given
    guard let real = CommandRunner.realPath(absolute) else {
      throw ExecError(.invalidInput, "\(option) \(given): \(absolute) does not exist (\(String(cString: strerror(errno)))).")
    }
    if path(absolute, isWithin: work), let link = firstLink(from: work, to: absolute) {
      throw ExecError(.invalidInput, """
        \(option) \(given): \(link) is a symbolic link in the working folder (to \(real)), which a command could have planted; \
        name the folder it leads to if that is the one you mean.
        """)
    }
    return real
  }

  /// The first symbolic link among the components of `path` below
  /// `folder` (`path` within `folder`, lexically), or nil.
  static func firstLink(from folder: String, to path: String) -> String? {
    var current = folder
    for component in path.dropFirst(folder.count).split(separator: "/") where component != "." {
      current += "/" + component
      var info = stat()
      guard lstat(current, &info) == 0 else { return nil }
      if info.st_mode & S_IFMT == S_IFLNK { return current }
    }
    return nil
  }

  /// Removes the symbolic links a command planted in its home where
  /// bubblewrap would follow them to make a mount point (bwrap resolves
  /// those paths in a root that still holds the whole machine): every
  /// component, in the sandbox's home folder, of each path the plan mounts
  /// below the home. Returns the paths removed, for a note.
  static func unlinkPlantedLinks(in plan: SandboxPlan) throws -> [String] {
    let mounted = plan.sharedFromHome.map { plan.home + "/" + $0 } + shellStartupFiles.map { plan.home + "/" + $0 }
      + [plan.workingFolder] + plan.readable + plan.writable
    var removed: [String] = []
    for target in mounted where path(target, isWithin: plan.home) && target != plan.home {
      let inside = plan.sandboxHome + target.dropFirst(plan.home.count)
      while let link = firstLink(from: plan.sandboxHome, to: inside) {
        guard unlink(link) == 0 else {
          throw ExecError(.io, "Cannot remove \(link), a symbolic link in the sandbox's home: \(String(cString: strerror(errno))).")
        }
        removed.append(String(link.dropFirst(plan.sandboxHome.count + 1)))
      }
    }
    return removed
  }
}
