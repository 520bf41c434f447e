import Dispatch
import ODRBase
import ODRKeyring
@testable import ODRKeys
import ODRTesting
import Synchronization
import Testing

@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct APIKeyProviderTests {
  /// A fetch that counts its runs, can fail its first `failures` runs, and
  /// writes `keys` into the store.
  final class FakeFetch: Sendable {
    let store: any SecretStore
    let keys: [String: String]
    private let state: Mutex<(runs: Int, failures: Int)>

    init(store: any SecretStore, keys: [String: String], failures: Int = 0) {
      self.store = store
      self.keys = keys
      state = Mutex((0, failures))
    }

    var runs: Int { state.withLock { $0.runs } }

    func run() async throws {
      let fail = state.withLock { state -> Bool in
        state.runs += 1
        guard state.failures > 0 else { return false }
        state.failures -= 1
        return true
      }
      try await Task.sleep(for: .milliseconds(50))  // keep the flight open while callers pile up
      if fail { throw KeyringError(.timeout, "The Secret Service did not answer within 5 s.") }
      for (name, value) in keys { try await store.setValue(value, for: name) }
    }
  }

  func makeSUT(failures: Int = 0) -> (APIKeyProvider, FakeFetch, MemoryStore) {
    let store = MemoryStore(service: "com.example.test")
    let fetch = FakeFetch(store: store, keys: ["Weather": "w-1", "Maps": "m-1"], failures: failures)
    return (APIKeyProvider(store: store, fetch: fetch.run), fetch, store)
  }

  @Test func aThousandConcurrentCallersOnAColdCacheCauseOneFetch() async throws {
    let (provider, fetch, _) = makeSUT()
    let values = try await withThrowingTaskGroup(of: String.self) { group in
      for i in 0..<1000 { group.addTask { try await provider.key(i.isMultiple(of: 2) ? "Weather" : "Maps") } }
      return try await group.reduce(into: [String]()) { $0.append($1) }
    }
    #expect(fetch.runs == 1)
    #expect(values.filter { $0 == "w-1" }.count == 500)
    #expect(values.filter { $0 == "m-1" }.count == 500)
  }

  @Test func concurrentCallersShareTheStoresReadsBeforeAndAfterTheFetch() async throws {
    let store = RecordingStore(service: "com.example.test")
    let readsAtWrite = Mutex<Int?>(nil), runs = Mutex(0)
    let provider = APIKeyProvider(store: store) {
      runs.withLock { $0 += 1 }
      try await Task.sleep(for: .milliseconds(50))  // keep the flight open while callers pile up
      readsAtWrite.withLock { $0 = store.reads }
      try await store.setValue("w-1", for: "Weather")
    }
    try await withThrowingTaskGroup(of: String.self) { group in
      for _ in 0..<1000 { group.addTask { try await provider.key("Weather") } }
      try await group.waitForAll()
    }
    // Each read is the key's lookup and the journal's (two lookups), never
    // the whole service. Before the fetch wrote, callers share reads: one
    // when they come together, a few when load spreads their coming over
    // the fetch (never one per caller: 2,000 lookups). After it: one read,
    // and at most two more by callers whose reads crossed its end.
    let before = try #require(readsAtWrite.withLock { $0 })
    #expect(before < 200, "\(before) lookups before the fetch wrote")
    #expect(store.reads - before <= 6, "\(store.reads - before) lookups after the fetch wrote")
    #expect(runs.withLock { $0 } == 1)
  }

  @Test func theProviderIsReadyAfterServingAKey() async throws {
    let (provider, fetch, _) = makeSUT()
    _ = try await provider.key("Maps")
    #expect(fetch.runs == 1)
    #expect(await provider.state == .ready)
  }

  @Test func aFailedFetchIsRetriedByTheNextCall() async throws {
    let (provider, fetch, _) = makeSUT(failures: 1)
    await #expect(throws: KeyringError.self) { try await provider.key("Weather") }
    guard case .failed = await provider.state else { Issue.record("state is not failed"); return }
    #expect(try await provider.key("Weather") == "w-1")
    #expect(fetch.runs == 2)
    #expect(await provider.state == .ready)
  }

  /// A warm key is served from memory while fresh, then read again: a
  /// rotation elsewhere reaches the app within the provider's freshness.
  @Test func aWarmKeyIsServedFromMemoryUntilItIsNoLongerFresh() async throws {
    let store = MemoryStore(service: "com.odr.fresh", items: ["Weather": "a"])
    let lasting = APIKeyProvider(store: store, freshness: .seconds(3600))
    let fleeting = APIKeyProvider(store: store, freshness: .zero)
    #expect(try await lasting.key("Weather") == "a")
    #expect(try await fleeting.key("Weather") == "a")
    try await store.setValue("b", for: "Weather")
    #expect(try await lasting.key("Weather") == "a")  // from memory: no read
    #expect(try await fleeting.key("Weather") == "b")  // read again
    try await lasting.refresh()
    #expect(try await lasting.key("Weather") == "b")
  }

  @Test func keysInTheStoreNeedNoFetch() async throws {
    let (provider, fetch, store) = makeSUT()
    try await store.setValue("w-stored", for: "Weather")
    #expect(try await provider.key("Weather") == "w-stored")
    #expect(fetch.runs == 0)
  }

  @Test func aKeyMissingAfterTheFetchIsNotFoundWithoutFetchingAgain() async throws {
    let (provider, fetch, _) = makeSUT()
    _ = try await provider.key("Weather")
    await #expect(throws: KeyringError.self) { try await provider.key("Absent") }
    await #expect(throws: KeyringError.self) { try await provider.key("Absent") }
    #expect(fetch.runs == 1)
  }

  /// A store whose `nth` lookup of `held` (the first by default) finds
  /// what is there, then waits until ``release()`` to answer: a lookup
  /// overtaken by a fetch.
  final class HeldLookupStore: SecretStore {
    let service: String
    let held: String
    let nth: Int
    private let inner: MemoryStore
    private struct Progress {
      var lookups = 0
      var began = false, released = false
      var beganWaiter: CheckedContinuation<Void, Never>?
      var releaseWaiter: CheckedContinuation<Void, Never>?
    }
    private let progress = Mutex(Progress())

    init(service: String, holding held: String, nth: Int = 1) {
      self.service = service
      self.held = held
      self.nth = nth
      inner = MemoryStore(service: service)
    }

    /// Returns once the held lookup has read the store.
    func lookupBegan() async {
      await withCheckedContinuation { continuation in
        let began = progress.withLock { progress in
          if !progress.began { progress.beganWaiter = continuation }
          return progress.began
        }
        if began { continuation.resume() }
      }
    }

    func release() {
      progress.withLock { progress in
        progress.released = true
        return progress.releaseWaiter.take()
      }?.resume()
    }

    func value(for name: String) async throws -> String {
      guard name == held, progress.withLock({ progress in progress.lookups += 1; return progress.lookups == nth }) else {
        return try await inner.value(for: name)
      }
      let found: String?
      do { found = try await inner.value(for: name) } catch let error as KeyringError where error.code == .notFound { found = nil }
      progress.withLock { progress in
        progress.began = true
        return progress.beganWaiter.take()
      }?.resume()
      await withCheckedContinuation { continuation in
        let released = progress.withLock { progress in
          if !progress.released { progress.releaseWaiter = continuation }
          return progress.released
        }
        if released { continuation.resume() }
      }
      guard let found else { throw KeyringError(.notFound, "No key '\(name)'.") }
      return found
    }

    func setValue(_ value: String, for name: String) async throws { try await inner.setValue(value, for: name) }
    func values(for names: Set<String>?) async throws -> [String: String] { try await inner.values(for: names) }
    func deleteValue(for name: String) async throws -> Bool { try await inner.deleteValue(for: name) }
    func names() async throws -> [String] { await inner.names() }
    func deleteAll() async throws -> Int { await inner.deleteAll() }
  }

  /// A lookup that began before the fetch and ends after it found nothing:
  /// its caller reads again rather than saying the key is missing, and a
  /// caller after the fetch makes a lookup of its own rather than waiting
  /// for that stale one (both failed under load in the suite before).
  @Test(.timeLimit(.minutes(1))) func aLookupOvertakenByTheFetchIsNotTheAnswer() async throws {
    let store = HeldLookupStore(service: "com.example.test", holding: "Maps")
    let fetch = FakeFetch(store: store, keys: ["Weather": "w-1", "Maps": "m-1"])
    let provider = APIKeyProvider(store: store, fetch: fetch.run)
    let early = Task { try await provider.key("Maps") }
    await store.lookupBegan()
    #expect(try await provider.key("Weather") == "w-1")  // runs the fetch
    // Before: this waited for the held lookup, then failed with it. The
    // watchdog only bounds that wait; it never fires when the test passes.
    let watchdog = Task {
      try await Task.sleep(for: .seconds(10))
      store.release()
    }
    #expect(try await provider.key("Maps") == "m-1")
    watchdog.cancel()
    store.release()
    #expect(try await early.value == "m-1")  // before: "No key 'Maps' … even after fetching the keys"
    #expect(fetch.runs == 1)
  }

  // MARK: The flight's callers resumed in any order

  /// A task executor that runs jobs on the global queue, or keeps them
  /// while held: a caller of the provider that runs on it cannot resume
  /// (a default actor runs a task's code on the task's executor), so the
  /// others resume first — what load did at random, made certain.
  final class HoldingExecutor: TaskExecutor {
    private let state = Mutex<(held: Bool, jobs: [UnownedJob])>((false, []))

    func hold() { state.withLock { $0.held = true } }

    func release() {
      let jobs = state.withLock { state -> [UnownedJob] in
        state.held = false
        defer { state.jobs = [] }
        return state.jobs
      }
      for job in jobs { run(job) }
    }

    func enqueue(_ job: consuming ExecutorJob) {
      let job = UnownedJob(job)
      let held = state.withLock { state -> Bool in
        if state.held { state.jobs.append(job) }
        return state.held
      }
      if !held { run(job) }
    }

    private func run(_ job: UnownedJob) {
      let executor = asUnownedTaskExecutor()
      DispatchQueue.global().async { job.runSynchronously(on: executor) }
    }
  }

  /// Opened once, for good; ``wait()`` returns once it is open.
  final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func open() {
      let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
        state.open = true
        defer { state.waiters = [] }
        return state.waiters
      }
      for waiter in waiters { waiter.resume() }
    }

    func wait() async {
      await withCheckedContinuation { continuation in
        let open = state.withLock { state -> Bool in
          if !state.open { state.waiters.append(continuation) }
          return state.open
        }
        if open { continuation.resume() }
      }
    }
  }

  /// A fetch the test steps through: each run opens ``started`` and waits
  /// for ``proceed``; the first fails when `failFirst`, the others write
  /// Weather and Maps.
  final class ScriptedFetch: Sendable {
    let store: any SecretStore
    let failFirst: Bool
    let started = Gate(), proceed = Gate()
    private let count = Mutex(0)

    init(store: any SecretStore, failFirst: Bool = false) {
      self.store = store
      self.failFirst = failFirst
    }

    var runs: Int { count.withLock { $0 } }

    func run() async throws {
      let run = count.withLock { count in
        count += 1
        return count
      }
      started.open()
      await proceed.wait()
      if failFirst && run == 1 { throw KeyringError(.timeout, "first fetch fails") }
      try await store.setValue("w-1", for: "Weather")
      try await store.setValue("m-1", for: "Maps")
    }
  }

  /// Returns once `count` callers wait for the fetch another started.
  func waiting(_ count: Int, for provider: APIKeyProvider) async {
    while await provider.waitingForFetch < count { await Task.yield() }
  }

  /// A caller that waited for the fetch and resumed before the caller that
  /// started it makes a lookup of its own; it does not join one that began
  /// before the fetch wrote (the old provider answered "No key 'Maps' …
  /// even after fetching the keys", under load, at random).
  @Test func aWaiterResumedBeforeTheFetchsStarterReadsAnew() async throws {
    let store = HeldLookupStore(service: "com.example.test", holding: "Maps", nth: 2)
    let fetch = ScriptedFetch(store: store)
    let provider = APIKeyProvider(store: store, fetch: fetch.run)
    let starter = HoldingExecutor()
    let owner = Task(executorPreference: starter) { try await provider.key("Weather") }
    await fetch.started.wait()
    let waiter = Task { try await provider.key("Maps") }  // lookup 1 of Maps: missing; waits for the fetch
    await waiting(1, for: provider)
    let early = Task { try await provider.key("Maps") }   // lookup 2, held: begun before the fetch wrote
    await store.lookupBegan()
    starter.hold()
    fetch.proceed.open()
    // The watchdog bounds the wait of the old provider's waiter, which joins the held lookup.
    let watchdog = Task {
      try await Task.sleep(for: .seconds(5))
      store.release()
    }
    let answer = await waiter.result
    watchdog.cancel()
    store.release()
    starter.release()
    #expect((try? answer.get()) == "m-1")
    #expect(try await owner.value == "w-1")
    #expect(try await early.value == "m-1")
    #expect(fetch.runs == 1)
  }

  /// A caller that saw the fetch fail, resumed before the caller that
  /// started it, finds the provider failed and its next call fetches again.
  @Test func aWaitersNextCallAfterAFailedFetchFetchesAgain() async throws {
    let store = MemoryStore(service: "com.example.test")
    let fetch = ScriptedFetch(store: store, failFirst: true)
    let provider = APIKeyProvider(store: store, fetch: fetch.run)
    let starter = HoldingExecutor()
    let owner = Task(executorPreference: starter) { try await provider.key("Weather") }
    await fetch.started.wait()
    let waiter = Task { try await provider.key("Maps") }
    await waiting(1, for: provider)
    starter.hold()
    fetch.proceed.open()
    await #expect(throws: KeyringError.self) { try await waiter.value }
    let afterFailure = await provider.state
    let retry = await Task { try await provider.key("Weather") }.result
    starter.release()
    _ = await owner.result
    #expect(afterFailure == .failed("first fetch fails"), "\(afterFailure)")
    #expect((try? retry.get()) == "w-1")
    #expect(fetch.runs == 2)
  }

  /// A lookup that began before the fetch answers its caller with what it
  /// read, but does not keep it: the next call reads what the fetch wrote.
  @Test func aLookupOvertakenByTheFetchIsNotKept() async throws {
    let store = HeldLookupStore(service: "com.example.test", holding: "Maps")
    try await store.setValue("m-0", for: "Maps")
    let fetch = ScriptedFetch(store: store)
    fetch.proceed.open()
    let provider = APIKeyProvider(store: store, freshness: .seconds(3600), fetch: fetch.run)
    let early = Task { try await provider.key("Maps") }
    await store.lookupBegan()
    #expect(try await provider.key("Weather") == "w-1")  // runs the fetch, which writes m-1
    store.release()
    #expect(try await early.value == "m-0")
    #expect(try await provider.key("Maps") == "m-1")
  }

  @Test func valuesAreCachedUntilInvalidated() async throws {
    let (provider, fetch, store) = makeSUT()
    #expect(try await provider.key("Weather") == "w-1")
    try await store.setValue("w-2", for: "Weather")
    #expect(try await provider.key("Weather") == "w-1")
    await provider.invalidate()
    #expect(try await provider.key("Weather") == "w-2")
    #expect(fetch.runs == 1)
  }

  /// A store whose reads wait at a gate the test opens.
  final class GatedStore: SecretStore {
    let base = MemoryStore(service: "com.example.gated")
    private let gate = Mutex<(closed: Bool, waiters: [CheckedContinuation<Void, Never>], arrived: Int)>((false, [], 0))
    var service: String { base.service }

    func close() { gate.withLock { $0.closed = true } }
    var arrived: Int { gate.withLock { $0.arrived } }
    func open() {
      let waiters = gate.withLock { state -> [CheckedContinuation<Void, Never>] in
        state.closed = false
        defer { state.waiters = [] }
        return state.waiters
      }
      for waiter in waiters { waiter.resume() }
    }

    private func pass() async {
      await withCheckedContinuation { continuation in
        let wait = gate.withLock { state -> Bool in
          state.arrived += 1
          if state.closed { state.waiters.append(continuation) }
          return state.closed
        }
        if !wait { continuation.resume() }
      }
    }

    func setValue(_ value: String, for name: String) async throws { try await base.setValue(value, for: name) }
    /// Reads, then waits at the gate with what it read.
    func value(for name: String) async throws -> String {
      let value = try await base.value(for: name)
      await pass()
      return value
    }
    /// Reads, then waits at the gate with what it read.
    func values(for names: Set<String>?) async throws -> [String: String] {
      let values = try await base.values(for: names)
      await pass()
      return values
    }
    func deleteValue(for name: String) async throws -> Bool { try await base.deleteValue(for: name) }
    func names() async throws -> [String] { await base.names() }
    func deleteAll() async throws -> Int { await base.deleteAll() }
  }

  /// Seed 004's race: an invalidation while a read is in flight is not
  /// undone by that read caching what it read (the key rotated out).
  @Test func anInvalidationDuringAReadIsNotLost() async throws {
    let store = GatedStore()
    try await store.setValue("w-old", for: "Weather")
    let provider = APIKeyProvider(store: store) {}
    store.close()
    let reader = Task { try await provider.key("Weather") }
    while store.arrived == 0 { try await Task.sleep(for: .milliseconds(1)) }  // the read is at the gate
    try await store.base.setValue("w-new", for: "Weather")
    await provider.invalidate()
    store.open()
    #expect(try await reader.value == "w-old")  // it asked before the rotation
    #expect(try await provider.key("Weather") == "w-new")
  }

  @Test func theObservationDeliversAChangeAndStopsWhenCancelled() async throws {
    let (provider, _, store) = makeSUT()
    _ = try await provider.key("Weather")
    try await provider.refresh()  // every key read once: the baseline
    let observation = await provider.changes()
    try await store.setValue("w-2", for: "Weather")
    try await provider.refresh()
    var iterator = observation.makeAsyncIterator()
    #expect(await iterator.next() == ["Weather"])
    observation.cancel()
    try await store.setValue("w-3", for: "Weather")
    try await provider.refresh()
    #expect(await iterator.next() == nil)
  }

  @Test func theObservationEndsWithItsTask() async throws {
    let (provider, _, _) = makeSUT()
    let observation = await provider.changes()
    let task = Task {
      var count = 0
      for await _ in observation { count += 1 }
      return count
    }
    task.cancel()
    #expect(await task.value == 0)
  }

  @Test func statesGoFromNotRequestedThroughLoadingToReady() async throws {
    let (provider, _, _) = makeSUT()
    let states = await provider.states()
    _ = try await provider.key("Weather")
    states.cancel()
    var seen: [APIKeyProvider.State] = []
    for await state in states { seen.append(state) }
    #expect(seen.first == .notRequested)
    #expect(seen.last == .ready)
    #expect(seen.contains(.loading))
  }
}
