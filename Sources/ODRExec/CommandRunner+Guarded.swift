import ODRBase
import CHardening
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension CommandRunner {
  /// The command of a sandboxed run, once it has started (`runSandboxed`).
  public struct SandboxedChild: Sendable {
    /// The command's pid, in odr's pid namespace.
    public let pid: Int32
    /// The sockets listening on ``SandboxPlan/listeners`` inside the
    /// sandbox, in order; the caller owns them.
    public let listeners: [Int32]
  }

  /// Runs the command of `odr exec --proxy --no-sandbox` as odr's child,
  /// which dies with odr (`PR_SET_PDEATHSIG`) and holds a session keyring
  /// of its own. Its standard streams are odr's, unwatched (it holds no key
  /// values). Signals sent to odr are forwarded to it. `started` is called
  /// with its pid once it runs; returns its wait status when it has ended.
  ///
  /// Blocks the calling thread throughout, and must: the parent-death
  /// signal follows the *thread* that forked, so a pool thread that exits
  /// while idle would kill the command with it.
  public static func runGuarded(_ arguments: [String], environment: [String], searchPath: String?, started: (Int32) -> Void) throws -> Int32 {
    let path = try resolve(arguments[0], searchPath: searchPath)
    let pid = try spawn(path, arguments: arguments, environment: environment, placed: [], error: -1, ignored: [], name: arguments[0])
    forward(to: pid, ownSession: false)
    started(pid)
    return wait(pid)
  }

  /// Runs `arguments` in the sandbox `plan` describes, with bubblewrap
  /// (`bwrap`, the path of the executable) and `environment` (which bwrap
  /// hands to the command unchanged: its first process shows the command
  /// its own environment). `caBundle` and `hosts` become files inside
  /// (``SandboxPlan/caBundlePath``, /etc/hosts). `started` is called, on
  /// this thread, once the command runs, with the listening sockets; the
  /// wait status it returns is the command's (a command killed by signal N
  /// is bwrap's exit code 128 + N: odr's own signal N comes back as that
  /// signal).
  ///
  /// If the sandbox cannot be made, the command does not run: throws
  /// `ExecError.Code.noSandbox` with what bubblewrap said. Blocks the
  /// calling thread throughout, as `runGuarded` does.
  public static func runSandboxed(_ arguments: [String], plan: SandboxPlan, environment: [String], bwrap: String, caBundle: [UInt8],
                                  hosts: [UInt8]?, searchPath: String?, started: (SandboxedChild) -> Void) throws -> Int32 {
    let path = try resolve(arguments[0], searchPath: searchPath)
    guard plan.showsAsIs(realPath(path) ?? path) else {
      throw ExecError(.commandNotFound, """
        \(arguments[0]) (\(realPath(path) ?? path)) is not visible inside the sandbox, which sees your home as a home of its own: \
        pass --allow-read with the folder it is in.
        """)
    }
    var descriptors = Descriptors()
    defer {
      descriptors.closeAll()
      plan.cleanUp()
    }
    let control = try descriptors.controlPair()
    let errors = try descriptors.pipe()
    let status = try descriptors.pipe()
    var seccompLength: UInt = 0
    let program = odr_seccomp_program(&seccompLength)
    var placed = [control.sandbox, STDERR_FILENO, try descriptors.data(UnsafeRawBufferPointer(start: program, count: Int(seccompLength))),
                  try caBundle.withUnsafeBytes { try descriptors.data($0) }, status.write]
    if let hosts { placed.append(try hosts.withUnsafeBytes { try descriptors.data($0) }) }
    let command = [path] + arguments.dropFirst()
    let pid = try spawn(bwrap, arguments: ["bwrap"] + plan.arguments(command: command), environment: environment, placed: placed,
                        error: errors.write, ignored: SandboxPlan.ignoredByBubblewrap, name: "bwrap")
    // odr keeps only its ends: the sandbox's are the sandbox's.
    for fd in placed where fd != STDERR_FILENO { descriptors.close(fd) }
    descriptors.close(errors.write)
    var listeners = [Int32](repeating: -1, count: plan.listeners.count)
    var child: Int32 = 0
    let count = odr_sandbox_receive(control.odr, &listeners, Int32(listeners.count), &child, 30_000)
    guard count == plan.listeners.count else {
      let reason = count < 0 ? String(cString: strerror(errno)) : nil
      if count < 0 { kill(pid, SIGKILL) }
      let bwrapStatus = wait(pid)
      throw sandboxFailure(said: descriptors.readAll(errors.read), status: bwrapStatus, reason: reason)
    }
    forward(to: child, ownSession: plan.newSession)
    started(SandboxedChild(pid: child, listeners: Array(listeners.prefix(Int(count)))))
    let bwrapStatus = wait(pid)
    let reported = descriptors.readAll(status.read)
    return commandStatus(bwrap: bwrapStatus, reported: reported, forwarded: Forwarding.lastForwarded.load(ordering: .sequentiallyConsistent))
  }

  /// The command's wait status from bwrap's: its `exit-code` status line
  /// when it wrote one (bwrap's own failures write none), as a signal when
  /// it is 128 + the signal odr forwarded.
  static func commandStatus(bwrap status: Int32, reported: String, forwarded: Int32) -> Int32 {
    let line = reported.split(separator: "\n").last { $0.contains("\"exit-code\"") }
    let code = line.flatMap { Int32($0.filter(\.isNumber)) } ?? ((status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f))
    if forwarded > 0 && code == 128 + forwarded { return forwarded }
    return (code & 0xff) << 8
  }

  /// The error for a sandbox that was not made: what bubblewrap said (its
  /// `bwrap: ` prefix dropped), and what to do.
  static func sandboxFailure(said: String, status: Int32, reason: String?) -> ExecError {
    let said = said.split(separator: "\n").map { $0.hasPrefix("bwrap: ") ? $0.dropFirst(7) : $0 }.joined(separator: "; ")
    let what = reason.map { "it did not start (\($0))" } ?? (said.isEmpty ? "bubblewrap exited with status \(status >> 8)" : said)
    return ExecError(.noSandbox, """
      The command's sandbox could not be made, so the command was not run: \(what). \(SandboxAdvice.forFailure(said))
      """)
  }

  private static func spawn(_ path: String, arguments: [String], environment: [String], placed: [Int32], error: Int32, ignored: [Int32],
                            name: String) throws -> Int32 {
    installForwarding()
    var execErrno: Int32 = 0
    let pid = withCStrings(arguments) { argv in
      withCStrings(environment) { envp in
        CoreDumps.withUserLimit {
          odr_spawn_guarded(path, UnsafeMutablePointer(mutating: argv), UnsafeMutablePointer(mutating: envp), placed, Int32(placed.count), error,
                            inheritedSIGPIPEIgnored ? 1 : 0, ignored, Int32(ignored.count), &execErrno)
        }
      }
    }
    guard pid > 0 else { throw startFailure(name, errno: errno) }
    if execErrno != 0 {
      _ = wait(pid)
      throw startFailure(name, errno: execErrno)
    }
    return pid
  }

  /// Signals sent to odr go to `pid` from now on (one that came before
  /// goes now); with `ownSession`, the terminal's too.
  private static func forward(to pid: Int32, ownSession: Bool) {
    Forwarding.ownSession.store(ownSession, ordering: .sequentiallyConsistent)
    Forwarding.child.store(pid, ordering: .sequentiallyConsistent)
    let pending = Forwarding.pending.load(ordering: .sequentiallyConsistent)
    if pending != 0 {
      Forwarding.lastForwarded.store(pending, ordering: .sequentiallyConsistent)
      kill(pid, pending)
    }
  }

  /// The wait status of `pid` once it has ended.
  private static func wait(_ pid: Int32) -> Int32 {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
      guard errno == EINTR else { return 127 << 8 }
    }
    return status
  }

  static func realPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
  }

  /// The descriptors of one sandboxed start, closed at its end unless handed on.
  private struct Descriptors {
    private var open: Set<Int32> = []

    mutating func controlPair() throws -> (odr: Int32, sandbox: Int32) {
      var ends: [Int32] = [-1, -1]
      guard odr_sandbox_control(&ends) == 0 else { throw Self.failure("a socket pair") }
      open.formUnion(ends)
      return (ends[0], ends[1])
    }

    mutating func pipe() throws -> (read: Int32, write: Int32) {
      var ends: [Int32] = [-1, -1]
      guard Glibc.pipe(&ends) == 0, ends.allSatisfy({ fcntl($0, F_SETFD, FD_CLOEXEC) == 0 }) else { throw Self.failure("a pipe") }
      open.formUnion(ends)
      return (ends[0], ends[1])
    }

    mutating func data(_ bytes: UnsafeRawBufferPointer) throws -> Int32 {
      let fd = odr_data_descriptor(bytes.baseAddress, UInt(bytes.count))
      guard fd >= 0 else { throw Self.failure("a memory file") }
      open.insert(fd)
      return fd
    }

    mutating func close(_ fd: Int32) {
      if open.remove(fd) != nil { Glibc.close(fd) }
    }

    mutating func closeAll() {
      for fd in open { Glibc.close(fd) }
      open = []
    }

    /// What `fd` holds until its end, at most 64 KiB.
    func readAll(_ fd: Int32) -> String {
      var bytes: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 4096)
      while bytes.count < 65_536 {
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        bytes += buffer[..<count]
      }
      return String(decoding: bytes, as: UTF8.self)
    }

    private static func failure(_ what: String) -> ExecError {
      ExecError(.io, "Cannot make \(what) for the command's sandbox: \(String(cString: strerror(errno))).")
    }
  }
}
