import Foundation

/// How many child processes the tests run at once.
///
/// Tests await their children without holding a thread, so without a bound
/// every test would start its children at once and a command that should
/// take 50 ms would take seconds on two cores. Requests for one slot are
/// served first come, first served. A request for every slot (a run whose
/// duration a test asserts, a stress test that is a load of its own) waits
/// until no child runs and nobody waits for a slot, and holds back no one
/// meanwhile: had it held later requests back, the machine would idle while
/// the slowest running child (a proxy session, a download from a slow
/// server) finished — seconds of an idle phase, measured.
package actor ChildSlots {
  /// Three times the processor count (children mostly wait on D-Bus, sockets and
  /// disks), or `$ODR_TEST_CHILDREN`.
  package static let shared = ChildSlots(limit: Int(ProcessInfo.processInfo.environment["ODR_TEST_CHILDREN"] ?? "")
    ?? 3 * ProcessInfo.processInfo.activeProcessorCount)

  let limit: Int
  private var free: Int
  private var waiting: [CheckedContinuation<Void, Never>] = []
  private var waitingForAll: [CheckedContinuation<Void, Never>] = []

  init(limit: Int) {
    self.limit = max(1, limit)
    free = self.limit
  }

  /// How many requests wait for one slot and for every slot.
  var queued: (one: Int, all: Int) { (waiting.count, waitingForAll.count) }

  /// Takes one slot, or every slot (see the type).
  func acquire(all: Bool) async {
    if all {
      if free == limit && waiting.isEmpty {
        free = 0
        return
      }
      await withCheckedContinuation { waitingForAll.append($0) }
    } else {
      if free > 0 && waiting.isEmpty {
        free -= 1
        return
      }
      await withCheckedContinuation { waiting.append($0) }
    }
  }

  func release(all: Bool) {
    free += all ? limit : 1
    while free > 0, !waiting.isEmpty {
      free -= 1
      waiting.removeFirst().resume()
    }
    if free == limit, !waitingForAll.isEmpty {
      free = 0
      waitingForAll.removeFirst().resume()
    }
  }

  /// True inside a body that holds every slot: its own children need none.
  @TaskLocal static var holdsAll = false

  /// Runs `body` holding one slot, or every slot.
  /// With `$ODR_TEST_TRACE` set to a file, each hold appends a line to it:
  /// milliseconds from the first hold of the run to when this one was
  /// asked for, milliseconds waited, milliseconds held, slots, `label` (what
  /// ran), so a phase's critical path and its stalls can be read off
  /// (docs/performance.md).
  package nonisolated func holding<T: Sendable>(all: Bool, label: String = "", _ body: @Sendable () async throws -> T) async rethrows -> T {
    if Self.holdsAll { return try await body() }
    _ = Self.firstHold  // the run's first hold starts the trace's clock
    let clock = ContinuousClock()
    let asked = clock.now
    await acquire(all: all)
    let got = clock.now
    defer { Self.trace(asked: asked - Self.firstHold, waited: got - asked, held: clock.now - got, slots: all ? limit : 1, label: label) }
    do {
      let value = all ? try await Self.$holdsAll.withValue(true) { try await body() } : try await body()
      await release(all: all)
      return value
    } catch {
      await release(all: all)
      throw error
    }
  }

  private static let traceFile: FileHandle? = ProcessInfo.processInfo.environment["ODR_TEST_TRACE"].flatMap { path in
    _ = FileManager.default.createFile(atPath: path, contents: nil)
    return FileHandle(forWritingAtPath: path)
  }
  private static let traceLock = NSLock()
  private static let firstHold = ContinuousClock.now

  private static func trace(asked: Duration, waited: Duration, held: Duration, slots: Int, label: String) {
    guard let traceFile else { return }
    func ms(_ duration: Duration) -> Int { Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000) }
    traceLock.withLock { traceFile.write(Data("\(ms(asked)) \(ms(waited)) \(ms(held)) \(slots) \(label)\n".utf8)) }
  }
}
