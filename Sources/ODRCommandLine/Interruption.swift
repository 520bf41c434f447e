import ODRBase
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Ctrl-C (SIGINT) or SIGTERM during a download: the work is cancelled and
/// unwinds — a resumable partial file kept for the next run, the pins it
/// took given back, the progress line cleared — instead of the process dying
/// mid-line. A second signal while it unwinds ends the process at once.
struct Interruption: Error {
  /// The signal that interrupted.
  let signal: Int32

  /// The shell's code for a process ended by `signal`: 130 for SIGINT.
  var exitCode: Int32 { 128 + signal }

  /// Runs `body`; a SIGINT or SIGTERM meanwhile cancels it, and this throws
  /// an ``Interruption`` whatever `body` threw on its way out. A `body` that
  /// finished anyway (the signal came as it ended) returns its value: its
  /// work is done and must be reported as done.
  /// Without `handlingSignals` (a command run inside another program) it
  /// just runs `body`: signals are the program's.
  static func cancelling<T: Sendable>(if handlingSignals: Bool, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    guard handlingSignals else { return try await body() }
    let received = Atomic<Int32>(0)
    let task = Task { try await body() }
    // A signal odr was started with ignored (`odr begin … &` in a script)
    // stays ignored.
    let signals = [SIGINT, SIGTERM].filter { number in
      var current = sigaction()
      sigaction(number, nil, &current)
      return unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) != 1  // SIG_IGN
    }
    let sources = signals.map { number in
      Glibc.signal(number, SIG_IGN)  // delivered to the source below instead
      let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
      source.setEventHandler {
        guard received.compareExchange(expected: 0, desired: number, ordering: .sequentiallyConsistent).exchanged else {
          // The second: end now, by the signal's default action (from a
          // dispatch thread, which may block it).
          DefaultSignal.raise(number)
          return
        }
        task.cancel()
      }
      source.resume()
      return source
    }
    defer {
      for source in sources { source.cancel() }
      for number in signals { Glibc.signal(number, SIG_DFL) }
    }
    do {
      return try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
    } catch {
      let number = received.load(ordering: .sequentiallyConsistent)
      throw number != 0 ? Interruption(signal: number) : error
    }
  }
}
