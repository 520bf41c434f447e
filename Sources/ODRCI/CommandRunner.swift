import CHardening
import ODRKeys
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Starts the command of `odr exec` with secrets in its environment.
///
/// Either odr becomes the command (`execve`: same pid, so exit codes and
/// signals are the command's own), or it runs it as a child whose stdout
/// and stderr go through a `SecretMasker` (ODRKeys); then signals sent to odr are
/// forwarded and odr ends the way the child ended. Secrets only ever travel
/// in the environment block, never in argv.
public enum CommandRunner {
  /// Signals forwarded to a masked child when someone sends them to odr.
  /// (Signals from the terminal already reach the whole process group.)
  static let forwarded: [Int32] = [SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM]

  private static let inheritedSIGPIPEIgnoredFlag = Atomic<Bool>(false)
  private static var inheritedSIGPIPEIgnored: Bool { inheritedSIGPIPEIgnoredFlag.load(ordering: .relaxed) }

  /// Remembers how odr itself started (whether SIGPIPE was ignored), so the
  /// command inherits what it would have inherited from odr's parent.
  /// Call first thing in `main`, before any library changes it.
  public static func recordInheritedSignals() {
    var old = sigaction()
    sigaction(SIGPIPE, nil, &old)
    inheritedSIGPIPEIgnoredFlag.store(unsafeBitCast(old.__sigaction_handler.sa_handler, to: Int.self) == 1, ordering: .relaxed)  // SIG_IGN
  }

  /// The environment for the command: odr's own (or, `pristine`, only
  /// PATH, HOME, USER, LANG and TERM) with `variables` set over it.
  public static func environment(with variables: SecretVariables, pristine: Bool) -> [String] {
    environment(with: variables.variables.map { ($0.name, $0.value) }, pristine: pristine)
  }

  /// odr's own private keys, handed to odr by CI: never passed on to the
  /// command, which needs the API keys, not what decrypts or signs them.
  public static let withheld: Set<String> = ["ODR_IDENTITY", "ODR_SIGNING_KEY"]

  /// The command's environment: odr's own (only `PATH`, `HOME`, `USER`,
  /// `LANG` and `TERM` when `pristine`; never ``withheld``), with
  /// `variables` set over it.
  public static func environment(with variables: [(name: String, value: String)], pristine: Bool) -> [String] {
    let kept: Set<String> = ["PATH", "HOME", "USER", "LANG", "TERM"]
    let overridden = Set(variables.map(\.name))
    var result: [String] = []
    var entry: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = environ
    while let pointer = entry?.pointee {
      let text = String(cString: pointer)
      let name = String(text.prefix { $0 != "=" })
      if !overridden.contains(name) && !withheld.contains(name) && (!pristine || kept.contains(name)) { result.append(text) }
      entry = entry! + 1
    }
    return result + variables.map { "\($0.name)=\($0.value)" }
  }

  /// Replaces odr with the command. Returns only by throwing: the command
  /// was not found (exit 127) or cannot be run (126).
  public static func replaceProcess(with arguments: [String], environment: [String]) throws -> Never {
    let path = try resolve(arguments[0])
    restoreSignalState()
    CoreDumps.restoreForChild()
    let code = withCStrings(arguments) { argv in
      withCStrings(environment) { envp in
        execve(path, argv, envp)
        guard errno == ENOEXEC else { return errno }
        // A script without #!: run it with sh, as execvp does.
        return withCStrings(["/bin/sh", path] + arguments.dropFirst()) { shArgv in
          execve("/bin/sh", shArgv, envp)
          return errno
        }
      }
    }
    throw startFailure(arguments[0], errno: code)
  }

  /// Runs the command with its stdout and stderr masked for `values`,
  /// forwarding signals, and returns its wait status when it has ended and
  /// its output is written.
  public static func runMasked(_ arguments: [String], environment: [String], masking values: [String]) throws -> Int32 {
    let path = try resolve(arguments[0])
    let out = try channel(to: STDOUT_FILENO), err = try channel(to: STDERR_FILENO)
    installForwarding()

    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, out.write, STDOUT_FILENO)
    posix_spawn_file_actions_adddup2(&actions, err.write, STDERR_FILENO)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var mask = sigset_t()
    sigemptyset(&mask)
    posix_spawnattr_setsigmask(&attributes, &mask)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in forwarded { sigaddset(&defaults, signal) }
    if !inheritedSIGPIPEIgnored { sigaddset(&defaults, SIGPIPE) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

    var pid: pid_t = 0
    var result = CoreDumps.withUserLimit {
      withCStrings(arguments) { argv in
        withCStrings(environment) { envp in posix_spawn(&pid, path, &actions, &attributes, argv, envp) }
      }
    }
    if result == ENOEXEC {
      result = CoreDumps.withUserLimit {
        withCStrings(["/bin/sh", path] + arguments.dropFirst()) { argv in
          withCStrings(environment) { envp in posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, envp) }
        }
      }
    }
    close(out.write)
    close(err.write)
    guard result == 0 else {
      close(out.read)
      close(err.read)
      throw startFailure(arguments[0], errno: result)
    }
    Forwarding.child.store(pid, ordering: .sequentiallyConsistent)
    let pending = Forwarding.pending.load(ordering: .sequentiallyConsistent)
    if pending != 0 { kill(pid, pending) }
    return pump(child: pid, from: [out, err], masking: values)
  }

  // MARK: The command's outputs

  /// What the command writes `target` through: a pipe, or when odr's own
  /// `target` is a terminal, a pseudo-terminal like it, so the command still
  /// sees a terminal (colours, progress bars, line buffering) while odr
  /// masks what it writes.
  private static func channel(to target: Int32) throws -> (read: Int32, write: Int32, terminal: Bool) {
    if isatty(target) == 1, let pty = pseudoTerminal(like: target) { return (pty.read, pty.write, true) }
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0, ends.allSatisfy({ fcntl($0, F_SETFD, FD_CLOEXEC) == 0 }) else {
      throw CIError(.io, "Cannot create pipes for the command: \(String(cString: strerror(errno))).")
    }
    // A bigger pipe, fewer reads and wakeups (best effort: the limit is the system's).
    _ = fcntl(ends[0], Self.setPipeSize, Self.pipeSize)
    return (ends[0], ends[1], false)
  }

  /// A new pseudo-terminal with `terminal`'s settings and size, except
  /// that output is passed on unprocessed (`terminal` does its own): its
  /// master to read, its slave for the command. Not the command's
  /// controlling terminal (the command keeps odr's, so Ctrl-C and job
  /// control work as before). nil when none can be made: then a pipe.
  private static func pseudoTerminal(like terminal: Int32) -> (read: Int32, write: Int32)? {
    var master: Int32 = -1, slave: Int32 = -1
    guard odr_open_pseudo_terminal(&master, &slave) == 0 else { return nil }
    var settings = termios()
    if tcgetattr(terminal, &settings) == 0 {
      settings.c_oflag &= ~tcflag_t(OPOST)
      _ = tcsetattr(slave, TCSANOW, &settings)
    }
    copyWindowSize(from: terminal, to: master)
    return (master, slave)
  }

  /// Gives the pseudo-terminal `master` the window size of `terminal`.
  private static func copyWindowSize(from terminal: Int32, to master: Int32) {
    var size = winsize()
    if ioctl(terminal, UInt(TIOCGWINSZ), &size) == 0 { _ = ioctl(master, UInt(TIOCSWINSZ), &size) }
  }

  /// Ends odr the way a child with wait `status` ended: its exit code, or
  /// the same signal.
  public static func exit(likeStatus status: Int32) -> Never {
    let signal = status & 0x7f
    if signal == 0 { Glibc.exit((status >> 8) & 0xff) }
    Glibc.signal(signal, SIG_DFL)
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, signal)
    pthread_sigmask(SIG_UNBLOCK, &set, nil)
    raise(signal)
    Glibc.exit(128 + signal)
  }

  // MARK: Output

  /// The size asked for the output pipes, and read at once (1 MiB).
  static let pipeSize: Int32 = 1 << 20
  /// F_SETPIPE_SZ (Linux; Glibc hides it behind _GNU_SOURCE).
  static let setPipeSize: Int32 = 1031

  /// Copies the child's stdout and stderr to odr's, masked, until both are
  /// closed, or the child has ended and nothing came for 100 ms (a
  /// background grandchild may keep the pipes open forever).
  private static func pump(child pid: pid_t, from channels: [(read: Int32, write: Int32, terminal: Bool)], masking values: [String]) -> Int32 {
    var maskers = channels.map { _ in SecretMasker(values: values) }
    var fds = channels.map { pollfd(fd: $0.read, events: Int16(POLLIN), revents: 0) }
    let targets = [STDOUT_FILENO, STDERR_FILENO]
    var buffer = [UInt8](repeating: 0, count: Int(pipeSize))
    var status: Int32 = 0
    var exited = false
    func close(_ k: Int) {
      if fds[k].fd >= 0 {
        write(maskers[k].finish(), to: targets[k])
        Glibc.close(fds[k].fd)
        fds[k].fd = -1
      }
    }
    while fds.contains(where: { $0.fd >= 0 }) {
      // The terminal was resized: so are the command's pseudo-terminals.
      if Forwarding.resized.exchange(false, ordering: .relaxed) {
        for (k, channel) in channels.enumerated() where channel.terminal && fds[k].fd >= 0 {
          copyWindowSize(from: targets[k], to: fds[k].fd)
        }
      }
      let ready = poll(&fds, nfds_t(fds.count), 100)
      if ready < 0 && errno == EINTR { continue }
      if ready <= 0 {
        if exited || ready < 0 { break }
        exited = waitpid(pid, &status, WNOHANG) == pid
        continue
      }
      for k in fds.indices where fds[k].fd >= 0 && fds[k].revents != 0 {
        let n = read(fds[k].fd, &buffer, buffer.count)
        if n > 0 {
          // odr's own stdout closed: close the child's too, so it sees
          // EPIPE as it would have without odr in between.
          if !write(maskers[k].mask(buffer[0..<n]), to: targets[k]) { close(k) }
        } else if n == 0 || (errno != EINTR && errno != EAGAIN) {
          close(k)
        }
      }
    }
    for k in fds.indices { close(k) }
    while !exited {
      let r = waitpid(pid, &status, 0)
      exited = r == pid || (r < 0 && errno != EINTR)
    }
    return status
  }

  @discardableResult
  private static func write(_ bytes: [UInt8], to fd: Int32) -> Bool {
    bytes.withUnsafeBytes { buffer in
      var offset = 0
      while offset < buffer.count {
        let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return false }
        offset += n
      }
      return true
    }
  }

  // MARK: Signals

  /// What the signal handler reads and writes: lock-free atomics, so
  /// async-signal-safe.
  private enum Forwarding {
    /// The child signals go to, once it runs (0 before).
    static let child = Atomic<pid_t>(0)
    /// A signal that came before the child ran (0: none).
    static let pending = Atomic<Int32>(0)
    /// Set by SIGWINCH, read by the pump (lock-free, so signal-safe).
    static let resized = Atomic<Bool>(false)
  }

  private static func installForwarding() {
    var action = sigaction()
    action.__sigaction_handler.sa_sigaction = { signal, info, _ in
      // SI_USER, SI_QUEUE, SI_TKILL (<= 0): sent by a process, e.g. `kill`
      // or a CI runner. Terminal signals (SI_KERNEL) reach the child anyway.
      guard let info, info.pointee.si_code <= 0 else { return }
      let child = Forwarding.child.load(ordering: .sequentiallyConsistent)
      if child > 0 { kill(child, signal) } else { Forwarding.pending.store(signal, ordering: .sequentiallyConsistent) }
    }
    action.sa_flags = SA_SIGINFO | SA_RESTART
    sigemptyset(&action.sa_mask)
    var unblock = sigset_t()
    sigemptyset(&unblock)
    for signal in forwarded {
      sigaction(signal, &action, nil)
      sigaddset(&unblock, signal)
    }
    var resize = sigaction()
    resize.__sigaction_handler.sa_handler = { _ in Forwarding.resized.store(true, ordering: .relaxed) }
    sigemptyset(&resize.sa_mask)
    sigaction(SIGWINCH, &resize, nil)
    sigaddset(&unblock, SIGWINCH)
    // This thread pumps the output until the end: let it take the signals
    // even if odr was started with them blocked (Foundation's Process does).
    pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
    Glibc.signal(SIGPIPE, SIG_IGN)
  }

  /// Unblocks every signal on this thread (Dispatch threads block most)
  /// and puts SIGPIPE back the way odr found it: `execve` keeps both.
  private static func restoreSignalState() {
    var empty = sigset_t()
    sigemptyset(&empty)
    pthread_sigmask(SIG_SETMASK, &empty, nil)
    Glibc.signal(SIGPIPE, inheritedSIGPIPEIgnored ? SIG_IGN : SIG_DFL)
  }

  // MARK: Finding the command

  /// The path of `command`: as given when it has a '/', else the first
  /// executable file of that name in PATH.
  static func resolve(_ command: String) throws -> String {
    if command.contains("/") {
      guard access(command, X_OK) == 0 else { throw startFailure(command, errno: errno) }
      return command
    }
    let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/local/bin:/usr/bin:/bin"
    var denied = false
    for directory in path.split(separator: ":", omittingEmptySubsequences: false) {
      let candidate = (directory.isEmpty ? "." : String(directory)) + "/" + command
      var info = stat()
      guard stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
      if access(candidate, X_OK) == 0 { return candidate }
      denied = true
    }
    throw startFailure(command, errno: denied ? EACCES : ENOENT)
  }

  private static func startFailure(_ command: String, errno code: Int32) -> CIError {
    if code == ENOENT || code == ENOTDIR {
      return CIError(.commandNotFound, "\(command): command not found (searched PATH).")
    }
    return CIError(.commandNotExecutable, "\(command): cannot run it: \(String(cString: strerror(code))).")
  }

  private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    let pointers = strings.map { strdup($0) } + [nil]
    defer {
      for pointer in pointers {
        if let pointer { explicit_bzero(pointer, strlen(pointer)) }  // environment blocks hold secrets
        free(pointer)
      }
    }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
  }
}
