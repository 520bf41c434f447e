import ODRBase
import ODRKeyring
import ODRKeys
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

  @Test func concurrentCallersShareOneStoreReadBeforeAndOneAfterTheFetch() async throws {
    let store = RecordingStore(service: "com.example.test")
    let fetch = FakeFetch(store: store, keys: ["Weather": "w-1"])
    let provider = APIKeyProvider(store: store, fetch: fetch.run)
    try await withThrowingTaskGroup(of: String.self) { group in
      for _ in 0..<1000 { group.addTask { try await provider.key("Weather") } }
      try await group.waitForAll()
    }
    // one read before the fetch, one after, and one by callers that came
    // while it ran (which may have missed what it wrote), each the key's
    // lookup and the journal's (two lookups): never the whole service,
    // never one per caller
    #expect(store.reads <= 6)
    #expect(fetch.runs == 1)
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

  /// A store whose first lookup of `held` finds what is there, then waits
  /// until ``release()`` to answer: a lookup overtaken by a fetch.
  final class HeldLookupStore: SecretStore {
    let service: String
    let held: String
    private let inner: MemoryStore
    private struct Progress {
      var began = false, released = false
      var beganWaiter: CheckedContinuation<Void, Never>?
      var releaseWaiter: CheckedContinuation<Void, Never>?
    }
    private let progress = Mutex(Progress())

    init(service: String, holding held: String) {
      self.service = service
      self.held = held
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
      guard name == held, progress.withLock({ !$0.began }) else { return try await inner.value(for: name) }
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
