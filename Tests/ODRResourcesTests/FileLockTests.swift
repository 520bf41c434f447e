import Foundation
import ODRBase
import Synchronization
import Testing
import ODRTesting

/// The one lock primitive: waiting neither polls nor holds a cooperative
/// thread, and shared holders cannot starve an exclusive waiter.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(1))) struct FileLockTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-lock-\(UUID().uuidString)")

  /// 8 readers take the lock shared in turns that always overlap (each holds
  /// it 20 ms, and at every instant several hold it); a writer that comes
  /// later still gets it within a second. (With `LOCK_NB` polling, the
  /// shared holders never all let go and the writer waited until they stopped.)
  @Test func eightOverlappingReadersDoNotStarveAWriter() async throws {
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }
    let lock = FileLock(url: root.appending(path: "import.lock"))
    let counters = Counters()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<8 {
        group.addTask {
          while !counters.stop.load(ordering: .relaxed) {
            try await lock.withShared {
              counters.reads.add(1, ordering: .relaxed)
              try await Task.sleep(for: .milliseconds(20))
            }
          }
        }
      }
      while counters.reads.load(ordering: .relaxed) < 16 { try await Task.sleep(for: .milliseconds(5)) }
      let clock = ContinuousClock()
      let start = clock.now
      let waited = try await lock.withExclusive { clock.now - start }
      counters.stop.store(true, ordering: .relaxed)
      try await group.waitForAll()
      #expect(waited < .seconds(1), "the writer waited \(waited) behind the readers")
    }
  }

  final class Counters: Sendable {
    let stop = Atomic<Bool>(false)
    let reads = Atomic<Int>(0)
  }

  /// Issue 38, 5: a wait parked in flock ends when its task is cancelled
  /// (Ctrl-C during `odr begin` cancels it), and the lock is not taken.
  @Test(arguments: [false, true]) func aParkedWaitEndsWhenCancelled(parked: Bool) async throws {
    let url = FileManager.default.temporaryDirectory.appending(path: "odr-cancel-lock-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: url) }
    let held = open(url.path, O_RDWR | O_CREAT, 0o600)
    defer { close(held) }
    try #require(flock(held, LOCK_EX) == 0)
    let ran = Atomic<Bool>(false)
    let waiting = Task { try await FileLock(url: url).withExclusive { ran.store(true, ordering: .relaxed) } }
    if parked {
      // Until a thread of this process is blocked in flock(2) (syscall 73).
      while Self.threadsInFlock() == 0 { try await Task.sleep(for: .milliseconds(1)) }
    }
    waiting.cancel()
    await #expect(throws: CancellationError.self) { try await waiting.value }
    let tookTheLock = ran.load(ordering: .relaxed)
    #expect(!tookTheLock)
  }

  /// How many threads of this process are blocked in flock(2) (syscall 73).
  static func threadsInFlock() -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.count { (try? String(contentsOfFile: "/proc/self/task/\($0)/syscall", encoding: .utf8))?.hasPrefix("73 ") == true }
  }

  /// Waiting for a held lock leaves the cooperative pool to other work:
  /// more waiters than there are pool threads, and a task that needs a
  /// thread still runs (a blocked flock on each pool thread would hang it).
  @Test func waitersDoNotHoldCooperativeThreads() async throws {
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }
    let lock = FileLock(url: root.appending(path: "held.lock"))
    let release = AsyncStream<Void>.makeStream()
    let held = AsyncStream<Void>.makeStream()
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask {
        try await lock.withExclusive {
          held.continuation.yield()
          for await _ in release.stream { break }
        }
      }
      for await _ in held.stream { break }
      let waiters = ProcessInfo.processInfo.activeProcessorCount * 2 + 2
      for _ in 0..<waiters { group.addTask { try await lock.withShared {} } }
      // Every waiter parked in flock(2), each on a thread of its own: a
      // blocking implementation parks at most the pool's threads, so this
      // count would stop there (and the probe below could not run).
      let clock = ContinuousClock(), deadline = clock.now + .seconds(10)
      while Self.threadsInFlock() < waiters && clock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
      #expect(Self.threadsInFlock() >= waiters)
      // Other work still gets a thread while every waiter waits.
      let answer = await Task.detached { 6 * 7 }.value
      #expect(answer == 42)
      release.continuation.yield()
      try await group.waitForAll()
    }
  }

  /// A lock whose folder cannot be written says which file and why.
  @Test func anUnwritableFolderIsAnError() async throws {
    let lock = FileLock(url: URL(filePath: "/proc/odr-no-such/import.lock"))
    await #expect(throws: SystemError.self) { try await lock.withShared {} }
  }
}
