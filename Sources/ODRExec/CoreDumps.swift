#if canImport(Glibc)
import Glibc
#endif
import CHardening
import Synchronization

/// Keeps odr's memory out of core files: a crash of `odr exec --mask` or
/// `odr fetch` while it holds keys and identities must not write them to a
/// core file in the working folder. odr makes itself non-dumpable
/// (`PR_SET_DUMPABLE 0`, which also keeps other processes of the user from
/// reading its memory) and sets its soft core limit to 0; the command
/// `odr exec` starts gets the user's core limit back (execve resets the
/// dumpable flag by itself).
public enum CoreDumps {
  private static let original = Mutex<rlimit?>(nil)

  /// Disables core dumps of this process. Call it first thing in `main`;
  /// calling it again changes nothing (the user's limit is kept from the
  /// first call).
  public static func disable() {
    _ = odr_set_non_dumpable()
    var limit = rlimit()
    guard getrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit) == 0 else { return }
    original.withLock { if $0 == nil { $0 = limit } }
    setSoftLimit(0)
  }

  /// Gives back the core limit odr was started with, for a program about
  /// to be exec'd in this process's place.
  public static func restoreForChild() {
    if let user = original.withLock({ $0 }) { setSoftLimit(user.rlim_cur) }
  }

  /// Runs `spawn` (which starts a child) with the user's core limit, then
  /// lowers odr's own to 0 again: the child inherits the limit it had.
  static func withUserLimit<T>(_ spawn: () -> T) -> T {
    guard original.withLock({ $0 }) != nil else { return spawn() }
    restoreForChild()
    defer { setSoftLimit(0) }
    return spawn()
  }

  private static func setSoftLimit(_ soft: rlim_t) {
    var limit = rlimit()
    guard getrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit) == 0 else { return }
    limit.rlim_cur = soft
    _ = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit)
  }
}
