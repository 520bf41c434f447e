import Foundation
import ODRBase

/// A server process a test starts and stops (nginx, moto_server). Spawned
/// with every descriptor above stderr closed: a server started with
/// Foundation's `Process` inherits the pipes of commands other tests are
/// running at the same moment, and those commands then never see EOF.
final class Daemon: @unchecked Sendable {
  let pid: pid_t

  /// `stdin`: a descriptor the server reads as its standard input
  /// (default: /dev/null).
  init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, log: URL? = nil, stdin: Int32? = nil) throws {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if let stdin {
      posix_spawn_file_actions_adddup2(&actions, stdin, 0)
    } else {
      posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    }
    let output = log?.path ?? "/dev/null"
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o600)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    Self.closeFrom3(&actions)
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    let env = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { env.forEach { free($0) } }
    // No signal blocked and every signal at its default: a child of the
    // test process would otherwise inherit the SIGINT/SIGTERM that odr's
    // in-process commands block, and stop() would wait out its SIGTERM.
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t(), all = sigset_t()
    sigemptyset(&none)
    sigfillset(&all)
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    var pid: pid_t = 0
    let status = posix_spawn(&pid, executable, &actions, &attributes, argv, env)
    guard status == 0 else { throw TestFailure("cannot start \(executable): \(String(cString: strerror(status)))") }
    self.pid = pid
  }

  /// True while the process has not exited.
  var isRunning: Bool {
    var status: Int32 = 0
    return waitpid(pid, &status, WNOHANG) == 0
  }

  /// Ends the process (SIGTERM, then SIGKILL after 2 s) and reaps it.
  func stop() {
    guard kill(pid, SIGTERM) == 0 else { return }
    var status: Int32 = 0
    for _ in 0..<200 {
      if waitpid(pid, &status, WNOHANG) != 0 { return }
      usleep(10_000)
    }
    kill(pid, SIGKILL)
    waitpid(pid, &status, 0)
  }

  /// glibc's posix_spawn_file_actions_addclosefrom_np (2.34+), which the
  /// Glibc module does not export; else each descriptor open now.
  private static func closeFrom3(_ actions: inout posix_spawn_file_actions_t) {
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
      _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
      return
    }
    // no /proc: no descriptors to close
    for name in dropping(.isTheAnswer, { try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") }) ?? [] {
      if let fd = Int32(name), fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
    }
  }
}
