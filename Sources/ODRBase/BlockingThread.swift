#if canImport(Glibc)
import Glibc
#endif

/// Blocking work on a thread of its own, awaited: a call that may block for
/// long (`flock` waiting for another process) must not hold one of the few
/// threads of the cooperative pool.
package enum BlockingThread {
  /// Runs `work` on a new detached thread and returns its result.
  package static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
      let job = Unmanaged.passRetained(Job { continuation.resume(returning: work()) })
      var thread = pthread_t()
      let started = pthread_create(&thread, nil, { argument in
        Unmanaged<Job>.fromOpaque(argument!).takeRetainedValue().body()
        return nil
      }, job.toOpaque())
      if started == 0 {
        pthread_detach(thread)
      } else {
        // No thread to be had (EAGAIN): do the work here rather than fail.
        job.takeRetainedValue().body()
      }
    }
  }

  private final class Job: @unchecked Sendable {  // handed to exactly one thread
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
  }
}
