import ODRBase
import CHardening
import ODRKeyFormat
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Starts the command of `odr exec` with secrets in its environment.
///
/// Either odr becomes the command (`execve`: same pid, so exit codes and
/// signals are the command's own), or it runs it as a child whose stdout,
/// stderr and terminal go through a `SecretMasker` (ODRKeys); then signals
/// sent to odr are forwarded and odr ends the way the child ended. Secrets only ever travel
/// in the environment block, never in argv.
public enum CommandRunner {
  /// Signals forwarded to a masked child when someone sends them to odr.
  /// (Signals from the terminal already reach the whole process group.)
  static let forwarded: [Int32] = [SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM]

  /// The signals odr's parent started it with ignored (a bit per signal).
  private static let inheritedIgnored = Atomic<UInt64>(0)
  static var inheritedSIGPIPEIgnored: Bool { inheritedIgnored(SIGPIPE) }

  /// Whether odr's parent started it with `signal` ignored.
  static func inheritedIgnored(_ signal: Int32) -> Bool {
    inheritedIgnored.load(ordering: .relaxed) & (1 << UInt64(signal)) != 0
  }

  /// Remembers how odr itself started (which of SIGPIPE, SIGINT and
  /// SIGQUIT were ignored), so the command inherits what it would have
  /// inherited from odr's parent. Call first thing in `main`, before any
  /// library changes it.
  public static func recordInheritedSignals() {
    var ignored: UInt64 = 0
    for signal in [SIGPIPE, SIGINT, SIGQUIT] {
      var old = sigaction()
      sigaction(signal, nil, &old)
      if unsafeBitCast(old.__sigaction_handler.sa_handler, to: Int.self) == 1 { ignored |= 1 << UInt64(signal) }  // SIG_IGN
    }
    inheritedIgnored.store(ignored, ordering: .relaxed)
  }

  /// odr's own private keys, handed to odr by CI: never passed on to the
  /// command, which needs the API keys, not what decrypts or signs them.
  public static let withheld: Set<String> = ["ODR_IDENTITY", "ODR_SIGNING_KEY"]

  /// The command's environment: `base` (odr's, from its command's context;
  /// only `PATH`, `HOME`, `USER`, `LANG` and `TERM` when `pristine`; never
  /// ``withheld``, named instead in ``withheldMarker`` so that an odr the
  /// command runs can say why it has no identity), with `variables` set
  /// over it, as `NAME=value` entries sorted by name.
  public static func environment(with variables: [(name: String, value: String)], pristine: Bool, base: [String: String]) -> [String] {
    let kept = pristineKept
    let overridden = Set(variables.map(\.name))
    var inherited = base.filter { name, _ in !overridden.contains(name) && !withheld.contains(name) && (!pristine || kept.contains(name)) }
    let held = withheld.filter { base[$0] != nil }.sorted()
    if !held.isEmpty { inherited[withheldMarker] = held.joined(separator: ",") }
    return inherited.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } + variables.map { "\($0.name)=\($0.value)" }
  }

  /// Names the ``withheld`` variables odr had and did not pass on (no values).
  public static let withheldMarker = "ODR_WITHHELD"

  /// What a `--pristine` command inherits from odr's environment.
  public static let pristineKept: Set<String> = ["PATH", "HOME", "USER", "LANG", "TERM"]

  /// Replaces odr with the command, found in `searchPath` (odr's PATH).
  /// Returns only by throwing: the command was not found (exit 127) or
  /// cannot be run (126).
  public static func replaceProcess(with arguments: [String], environment: [String], searchPath: String?) throws -> Never {
    let path = try resolve(arguments[0], searchPath: searchPath)
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
  ///
  /// When odr has a controlling terminal, the command runs in a session of
  /// its own whose controlling terminal is a pseudo-terminal odr masks
  /// (`ChildTerminal`): its stdin, stdout and stderr are that terminal
  /// where odr's are a terminal, and `/dev/tty` is it too. Otherwise (CI)
  /// stdout and stderr are pipes.
  public static func runMasked(_ arguments: [String], environment: [String], searchPath: String?, masking values: [String]) throws -> Int32 {
    let path = try resolve(arguments[0], searchPath: searchPath)
    let terminal = ChildTerminal.make()
    defer { terminal?.close() }
    var outputs: [Output] = []
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if let terminal {
      // Opened after setsid, the slave becomes the command's controlling
      // terminal; it serves each standard stream that is a terminal for odr.
      let scratch = unusedDescriptor()
      posix_spawn_file_actions_addopen(&actions, scratch, terminal.slavePath, O_RDWR, 0)
      for fd in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where isatty(fd) == 1 {
        posix_spawn_file_actions_adddup2(&actions, scratch, fd)
      }
      posix_spawn_file_actions_addclose(&actions, scratch)
      // What the command writes to its terminal goes to odr's stdout if it
      // is the terminal, else to stderr if that is, else to /dev/tty.
      let target = isatty(STDOUT_FILENO) == 1 ? STDOUT_FILENO : isatty(STDERR_FILENO) == 1 ? STDERR_FILENO : terminal.user
      outputs.append(Output(read: terminal.master, target: target, masker: SecretMasker(values: values)))
    }
    var writeEnds: [Int32] = []
    defer { for fd in writeEnds { close(fd) } }
    for fd in [STDOUT_FILENO, STDERR_FILENO] where terminal == nil || isatty(fd) != 1 {
      let ends = try pipe()
      writeEnds.append(ends.write)
      posix_spawn_file_actions_adddup2(&actions, ends.write, fd)
      outputs.append(Output(read: ends.read, target: fd, masker: SecretMasker(values: values)))
    }
    installForwarding()

    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var mask = sigset_t()
    sigemptyset(&mask)
    posix_spawnattr_setsigmask(&attributes, &mask)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in forwarded + [SIGTSTP, SIGTTIN, SIGTTOU] { sigaddset(&defaults, signal) }
    if !inheritedSIGPIPEIgnored { sigaddset(&defaults, SIGPIPE) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF) | (terminal == nil ? 0 : odr_posix_spawn_setsid()))

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
    for fd in writeEnds { close(fd) }
    writeEnds = []
    guard result == 0 else {
      for output in outputs where output.read != terminal?.master { close(output.read) }
      throw startFailure(arguments[0], errno: result)
    }
    Forwarding.ownSession.store(terminal != nil, ordering: .sequentiallyConsistent)
    Forwarding.child.store(pid, ordering: .sequentiallyConsistent)
    let pending = Forwarding.pending.load(ordering: .sequentiallyConsistent)
    if pending != 0 { kill(pid, pending) }
    let raw = terminal?.enterRawMode() ?? false
    defer { if raw { terminal?.restore() } }
    let status = pump(child: pid, outputs: outputs, terminal: terminal, raw: raw)
    Forwarding.child.store(0, ordering: .sequentiallyConsistent)  // reaped: its pid may be another's now
    return status
  }

  /// Sends `signal` to the command ``runMasked(_:environment:searchPath:masking:)``
  /// runs now; false when none runs (`odr exec --watch` stops it this way).
  @discardableResult
  public static func signalRunningCommand(_ signal: Int32) -> Bool {
    let child = Forwarding.child.load(ordering: .sequentiallyConsistent)
    return child > 0 && kill(child, signal) == 0
  }

  /// A descriptor number odr has not open (from 10 up): where the command
  /// opens its terminal before it is copied to 0–2, without replacing a
  /// descriptor the command inherits.
  private static func unusedDescriptor() -> Int32 {
    var fd: Int32 = 10
    while fcntl(fd, F_GETFD) != -1 || errno != EBADF { fd += 1 }
    return fd
  }

  // MARK: The command's outputs

  /// One stream of the command's output: where odr reads it, where it goes,
  /// and its masker.
  private struct Output {
    var read: Int32
    let target: Int32
    var masker: SecretMasker
  }

  /// A pipe for one of the command's outputs: its ends, close-on-exec.
  private static func pipe() throws -> (read: Int32, write: Int32) {
    var ends: [Int32] = [-1, -1]
    guard Glibc.pipe(&ends) == 0, ends.allSatisfy({ fcntl($0, F_SETFD, FD_CLOEXEC) == 0 }) else {
      throw ExecError(.io, "Cannot create pipes for the command: \(String(cString: strerror(errno))).")
    }
    // A bigger pipe, fewer reads and wakeups (best effort: the limit is the system's).
    _ = fcntl(ends[0], Self.setPipeSize, Self.pipeSize)
    return (ends[0], ends[1])
  }

  /// Ends odr the way a child with wait `status` ended: its exit code, or
  /// the same signal.
  public static func exit(likeStatus status: Int32) -> Never {
    let signal = status & 0x7f
    if signal == 0 { Glibc.exit((status >> 8) & 0xff) }
    DefaultSignal.raise(signal)
    Glibc.exit(128 + signal)
  }

  // MARK: Output

  /// The size asked for the output pipes, and read at once (1 MiB).
  static let pipeSize: Int32 = 1 << 20
  /// F_SETPIPE_SZ (Linux; Glibc hides it behind _GNU_SOURCE).
  static let setPipeSize: Int32 = 1031

  /// How long the command may pause before what a masker holds back is
  /// written anyway (a prompt, a `\r` progress line: it must show), in ms…
  static let idleFlush: Int32 = 30
  /// …if it holds back at most this many bytes: a prompt's last bytes that
  /// happen to begin a value. More is most likely a value written in two
  /// parts, whose first part must not show: it stays held until the next
  /// write says whether it is one.
  static let idleFlushLimit = 8

  /// Copies the command's outputs to odr's, masked, until all are closed,
  /// or the command has ended and nothing came for 100 ms (a background
  /// grandchild may keep them open forever). With a terminal in raw mode,
  /// relays the user's keys to the command's terminal, and follows job
  /// control: when the command stops (Ctrl-Z), odr puts the user's terminal
  /// back and stops too; continued, it resumes the command.
  private static func pump(child pid: pid_t, outputs: [Output], terminal: ChildTerminal?, raw: Bool) -> Int32 {
    var outputs = outputs
    // The user's keys: polled after the outputs, while in raw mode.
    var fds = outputs.map { pollfd(fd: $0.read, events: Int16(POLLIN), revents: 0) }
    if raw, let terminal { fds.append(pollfd(fd: terminal.user, events: Int16(POLLIN), revents: 0)) }
    var buffer = [UInt8](repeating: 0, count: Int(pipeSize))
    var status: Int32 = 0
    var exited = false
    func close(_ k: Int) {
      guard fds[k].fd >= 0 else { return }
      if k < outputs.count {
        write(outputs[k].masker.finish(), to: outputs[k].target)
        if fds[k].fd != terminal?.master { Glibc.close(fds[k].fd) }  // the terminal closes its own
      }
      fds[k].fd = -1
    }
    func flushable(_ k: Int) -> Bool { fds[k].fd >= 0 && (1...idleFlushLimit).contains(outputs[k].masker.heldCount) }
    func flushHeld() {
      for k in outputs.indices where flushable(k) {
        if !write(outputs[k].masker.flush(), to: outputs[k].target) { close(k) }
      }
    }
    while fds.prefix(outputs.count).contains(where: { $0.fd >= 0 }) {
      // The terminal was resized: so is the command's.
      if Forwarding.resized.exchange(false, ordering: .relaxed) { terminal?.copyWindowSize() }
      let holding = outputs.indices.contains(where: flushable)
      let ready = poll(&fds, nfds_t(fds.count), holding ? idleFlush : 100)
      if ready < 0 && errno == EINTR { continue }
      if ready == 0 && holding {
        flushHeld()
        continue
      }
      if ready <= 0 {
        if exited || ready < 0 { break }
        let r = waitpid(pid, &status, WNOHANG | (raw ? WUNTRACED : 0))
        if r == pid && raw && (status & 0xff) == 0x7f, let terminal {
          suspend(child: pid, terminal: terminal)
          status = 0
        } else {
          exited = r == pid
        }
        continue
      }
      for k in fds.indices where fds[k].fd >= 0 && fds[k].revents != 0 {
        let n = read(fds[k].fd, &buffer, buffer.count)
        if k == outputs.count, let terminal {
          if n > 0 { relay(buffer[0..<n], to: terminal, child: pid) } else if n == 0 || (errno != EINTR && errno != EAGAIN) { fds[k].fd = -1 }
        } else if n > 0 {
          // odr's own stdout closed: close the child's too, so it sees
          // EPIPE as it would have without odr in between.
          if !write(outputs[k].masker.mask(buffer[0..<n]), to: outputs[k].target) { close(k) }
        } else if n == 0 || (errno != EINTR && errno != EAGAIN) {
          close(k)  // end of file, or EIO: every holder of the terminal has closed it
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

  /// Passes the user's keys to the command's terminal, as typed, except
  /// its suspend key (Ctrl-Z) while that terminal makes signals of keys:
  /// the command's process group is orphaned (its parent, odr, is in
  /// another session), so the kernel would drop the SIGTSTP; odr suspends
  /// the command and itself instead.
  private static func relay(_ keys: ArraySlice<UInt8>, to terminal: ChildTerminal, child pid: pid_t) {
    var settings = termios()
    guard tcgetattr(terminal.master, &settings) == 0, settings.c_lflag & tcflag_t(ISIG) != 0,
          case let key = withUnsafeBytes(of: settings.c_cc, { $0[Int(VSUSP)] }), key != 0, let at = keys.firstIndex(of: key) else {
      write(Array(keys), to: terminal.master)
      return
    }
    write(Array(keys[..<at]), to: terminal.master)
    kill(-pid, SIGSTOP)
    var status: Int32 = 0
    _ = waitpid(pid, &status, WUNTRACED)  // its stop, reported here and not to the pump
    suspend(child: pid, terminal: terminal)
    relay(keys[(at + 1)...], to: terminal, child: pid)
  }

  /// The command stopped (Ctrl-Z, or a signal): the user's terminal goes
  /// back to its settings and odr stops too, so the shell takes over; when
  /// odr is continued (`fg`), raw mode comes back and the command resumes.
  private static func suspend(child pid: pid_t, terminal: ChildTerminal) {
    terminal.restore()
    kill(getpid(), SIGSTOP)
    _ = terminal.enterRawMode()
    terminal.copyWindowSize()
    kill(-pid, SIGCONT)
  }

  @discardableResult
  private static func write(_ bytes: [UInt8], to fd: Int32) -> Bool {
    bytes.withUnsafeBytes { buffer in
      var offset = 0
      while offset < buffer.count {
        let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
        if n < 0 && errno == EINTR { continue }
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
          // A non-blocking stdout (Node-based runners set O_NONBLOCK) that
          // is full: wait until it takes more, as a blocking write would.
          var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
          _ = poll(&ready, 1, -1)
          continue
        }
        if n <= 0 { return false }
        offset += n
      }
      return true
    }
  }

  // MARK: Signals

  /// What the signal handler reads and writes: lock-free atomics, so
  /// async-signal-safe.
  enum Forwarding {
    /// The child signals go to, once it runs (0 before).
    static let child = Atomic<pid_t>(0)
    /// A signal that came before the child ran (0: none).
    static let pending = Atomic<Int32>(0)
    /// Set by SIGWINCH, read by the pump (lock-free, so signal-safe).
    static let resized = Atomic<Bool>(false)
    /// True when the child runs in a session of its own: the terminal's
    /// signals (a hangup, say) no longer reach it, so odr forwards them too.
    static let ownSession = Atomic<Bool>(false)
    /// The last signal forwarded to the child (0: none).
    static let lastForwarded = Atomic<Int32>(0)
  }

  static func installForwarding() {
    var action = sigaction()
    action.__sigaction_handler.sa_sigaction = { signal, info, _ in
      // SI_USER, SI_QUEUE, SI_TKILL (<= 0): sent by a process, e.g. `kill`
      // or a CI runner. Terminal signals (SI_KERNEL) reach the child anyway,
      // unless it has a session of its own.
      guard let info, info.pointee.si_code <= 0 || Forwarding.ownSession.load(ordering: .sequentiallyConsistent) else { return }
      let child = Forwarding.child.load(ordering: .sequentiallyConsistent)
      if child > 0 {
        Forwarding.lastForwarded.store(signal, ordering: .sequentiallyConsistent)
        kill(child, signal)
      } else {
        Forwarding.pending.store(signal, ordering: .sequentiallyConsistent)
      }
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
  /// executable file of that name in `searchPath` (a PATH; nil: the
  /// default, as execvp's).
  static func resolve(_ command: String, searchPath: String?) throws -> String {
    if command.contains("/") {
      guard access(command, X_OK) == 0 else { throw startFailure(command, errno: errno) }
      return command
    }
    let path = searchPath ?? "/usr/local/bin:/usr/bin:/bin"
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

  static func startFailure(_ command: String, errno code: Int32) -> ExecError {
    if code == ENOENT || code == ENOTDIR {
      return ExecError(.commandNotFound, "\(command): command not found (searched PATH).")
    }
    return ExecError(.commandNotExecutable, "\(command): cannot run it: \(String(cString: strerror(code))).")
  }

  static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
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
