import Foundation

/// How many child processes the tests run at once.
///
/// Tests await their children without holding a thread, so without a bound
/// every test would start its children at once and a command that should
/// take 50 ms would take seconds on two cores. First come, first served:
/// a test that takes every slot (a stress test, which is a load of its own)
/// waits for the running children and holds later ones back until it is done.
actor ChildSlots {
  /// Three times the processor count (children mostly wait on D-Bus, sockets and
  /// disks), or `$ODR_TEST_CHILDREN`.
  static let shared = ChildSlots(limit: Int(ProcessInfo.processInfo.environment["ODR_TEST_CHILDREN"] ?? "")
    ?? 3 * ProcessInfo.processInfo.activeProcessorCount)

  let limit: Int
  private var free: Int
  private var waiting: [(slots: Int, continuation: CheckedContinuation<Void, Never>)] = []

  init(limit: Int) {
    self.limit = max(1, limit)
    free = self.limit
  }

  /// Takes `slots` (at most `limit`), waiting behind earlier requests.
  func acquire(_ slots: Int) async {
    let slots = min(slots, limit)
    if waiting.isEmpty && free >= slots {
      free -= slots
      return
    }
    await withCheckedContinuation { waiting.append((slots, $0)) }
  }

  func release(_ slots: Int) {
    free += min(slots, limit)
    while let first = waiting.first, free >= first.slots {
      free -= first.slots
      waiting.removeFirst()
      first.continuation.resume()
    }
  }

  /// True inside a body that holds every slot: its own children need none.
  @TaskLocal static var holdsAll = false

  /// Runs `body` holding `slots` (every slot when `slots >= limit`).
  /// With `$ODR_TEST_TRACE` set to a file, each hold appends a line to it:
  /// milliseconds waited, milliseconds held, slots, `label` (what ran), so
  /// a phase's critical path can be read off (docs/performance.md).
  nonisolated func holding<T: Sendable>(_ slots: Int, label: String = "", _ body: @Sendable () async throws -> T) async rethrows -> T {
    if Self.holdsAll { return try await body() }
    let clock = ContinuousClock()
    let asked = clock.now
    await acquire(slots)
    let got = clock.now
    defer { Self.trace(waited: got - asked, held: clock.now - got, slots: min(slots, limit), label: label) }
    do {
      let value = slots >= limit ? try await Self.$holdsAll.withValue(true) { try await body() } : try await body()
      await release(slots)
      return value
    } catch {
      await release(slots)
      throw error
    }
  }

  private static let traceFile: FileHandle? = ProcessInfo.processInfo.environment["ODR_TEST_TRACE"].flatMap { path in
    _ = FileManager.default.createFile(atPath: path, contents: nil)
    return FileHandle(forWritingAtPath: path)
  }
  private static let traceLock = NSLock()

  private static func trace(waited: Duration, held: Duration, slots: Int, label: String) {
    guard let traceFile else { return }
    func ms(_ duration: Duration) -> Int { Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000) }
    traceLock.withLock { traceFile.write(Data("\(ms(waited)) \(ms(held)) \(slots) \(label)\n".utf8)) }
  }
}
