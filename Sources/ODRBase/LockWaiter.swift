import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension FileLock {
  /// The thread blocked in `flock` for a wait, and whether the wait was
  /// cancelled. Cancelling interrupts the call with SIGURG (a no-op handler
  /// installed without SA_RESTART, so `flock` returns EINTR), again every
  /// few milliseconds until the thread has left — the signal may land just
  /// before it enters `flock` — so a cancelled wait ends promptly.
  final class Waiter: Sendable {
    private struct State {
      var thread: pthread_t?
      var cancelled = false
    }
    private let state = Mutex(State())

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Called on the blocking thread before it waits.
    func enter() {
      Self.installWakeHandler()
      state.withLock { $0.thread = pthread_self() }
    }

    /// Called on the blocking thread once it stops waiting.
    func leave() {
      state.withLock { $0.thread = nil }
    }

    func cancel() {
      state.withLock { $0.cancelled = true }
      let waker = Unmanaged.passRetained(self)
      var thread = pthread_t()
      // A thread of its own: onCancel handlers must not block.
      guard pthread_create(&thread, nil, { argument in
        let waiter = Unmanaged<Waiter>.fromOpaque(argument!).takeRetainedValue()
        while let blocked = waiter.state.withLock({ $0.thread }) {
          pthread_kill(blocked, SIGURG)
          usleep(2_000)
        }
        return nil
      }, waker.toOpaque()) == 0 else {
        waker.release()
        return
      }
      pthread_detach(thread)
    }

    /// SIGURG's no-op handler, without SA_RESTART (its default action is
    /// to be ignored, so one arriving from elsewhere changes nothing).
    private static func installWakeHandler() {
      // This thread inherited its creator's mask, which may block SIGURG.
      var set = sigset_t()
      sigemptyset(&set)
      sigaddset(&set, SIGURG)
      pthread_sigmask(SIG_UNBLOCK, &set, nil)
      var action = sigaction()
      action.__sigaction_handler.sa_handler = { _ in }
      sigemptyset(&action.sa_mask)
      action.sa_flags = 0
      sigaction(SIGURG, &action, nil)
    }
  }
}
