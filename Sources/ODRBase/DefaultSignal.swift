#if canImport(Glibc)
import Glibc
#endif

/// Ending the process by a signal's default action.
package enum DefaultSignal {
  /// Raises `number` with its default action, unblocked on this thread
  /// first (a dispatch thread, or one that inherited a blocked mask, would
  /// leave it pending and the process running). Returns only if the
  /// default action does not end the process.
  package static func raise(_ number: Int32) {
    Glibc.signal(number, SIG_DFL)
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, number)
    pthread_sigmask(SIG_UNBLOCK, &set, nil)
    Glibc.raise(number)
  }
}
