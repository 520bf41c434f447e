import CHardening
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension CommandRunner {
  /// A command started by ``startGuarded(_:environment:searchPath:hiding:)``.
  public struct GuardedChild: Sendable {
    public let pid: Int32
    /// Why the sandbox could not be made (`strerror`), when one was asked
    /// for and the command runs without it.
    public let sandboxFailure: String?
  }

  /// What the sandbox hides from a guarded command: folders covered by an
  /// empty tmpfs, files (sockets) covered by /dev/null.
  public struct Hidden: Sendable {
    public var folders: [String]
    public var files: [String]

    public init(folders: [String], files: [String]) {
      self.folders = folders
      self.files = files
    }
  }

  /// Runs the command of `odr exec --proxy` as odr's child, which dies
  /// with odr (`PR_SET_PDEATHSIG`), holds a session keyring of its own,
  /// and — with `hiding` — runs in user and mount namespaces where those
  /// paths are empty. Its standard streams are odr's, unwatched (it holds
  /// no key values). Signals sent to odr are forwarded to it. `started` is
  /// called once it runs; returns its wait status when it has ended.
  ///
  /// Blocks the calling thread throughout, and must: the parent-death
  /// signal follows the *thread* that forked, so a pool thread that exits
  /// while idle would kill the command with it.
  public static func runGuarded(_ arguments: [String], environment: [String], searchPath: String?, hiding: Hidden?,
                                started: (GuardedChild) -> Void) throws -> Int32 {
    let child = try startGuarded(arguments, environment: environment, searchPath: searchPath, hiding: hiding)
    started(child)
    var status: Int32 = 0
    while waitpid(child.pid, &status, 0) < 0 {
      guard errno == EINTR else { return 127 << 8 }
    }
    return status
  }

  private static func startGuarded(_ arguments: [String], environment: [String], searchPath: String?, hiding: Hidden?) throws -> GuardedChild {
    let path = try resolve(arguments[0], searchPath: searchPath)
    installForwarding()
    var report: Int32 = 0
    var reportErrno: Int32 = 0
    let pid = withCStrings(arguments) { argv in
      withCStrings(environment) { envp in
        withCStrings(hiding?.folders ?? []) { folders in
          withCStrings(hiding?.files ?? []) { files in
            CoreDumps.withUserLimit {
              odr_spawn_guarded(path, UnsafeMutablePointer(mutating: argv), UnsafeMutablePointer(mutating: envp), hiding == nil ? 0 : 1,
                                UnsafePointer(OpaquePointer(folders)), UnsafePointer(OpaquePointer(files)), inheritedSIGPIPEIgnored ? 1 : 0,
                                &report, &reportErrno)
            }
          }
        }
      }
    }
    guard pid > 0 else { throw startFailure(arguments[0], errno: errno) }
    Forwarding.ownSession.store(false, ordering: .sequentiallyConsistent)
    Forwarding.child.store(pid, ordering: .sequentiallyConsistent)
    let pending = Forwarding.pending.load(ordering: .sequentiallyConsistent)
    if pending != 0 { kill(pid, pending) }
    if report == Int32(odr_guard_exec_failed) {
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
      throw startFailure(arguments[0], errno: reportErrno)
    }
    let failure = report == Int32(odr_guard_no_sandbox) ? String(cString: strerror(reportErrno)) : nil
    return GuardedChild(pid: pid, sandboxFailure: failure)
  }
}
