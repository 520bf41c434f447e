public import ODRKeyFormat
import FoundationEssentials
public import ODRKeyring
public import ODRBase

/// Serves API keys to an app: `try await provider.key("Weather")`.
///
/// Each key is read on its own (one keyring lookup) and served from memory
/// for ``freshness`` (default 10 s: a warm `key(_:)` costs an actor hop,
/// microseconds), then read again, so a key rotated by `odr fetch`
/// elsewhere reaches the app within that time; ``refresh()`` reads them all
/// at once and ``invalidate()`` drops them. When a key is missing, the provider runs its
/// fetch once, however many callers are waiting (single flight), then
/// answers them all. A failed fetch is not sticky: the next call tries
/// again. The fetch runs at most once per lifetime while it succeeds
/// (seeds 000 and 003); `invalidate()` starts a new lifetime. Reading never
/// writes to the keyring: while an import is unfinished, keys read as they
/// were before it.
///
/// A provider over the keyring alone (keys put there by `odr fetch`):
///
/// ```swift
/// let provider = APIKeyProvider(store: try SecretServiceStore(service: "com.example.demo"))
/// let key = try await provider.key("Weather")
/// ```
///
/// One that fetches the keys from a catalog on a miss comes from
/// `APIKeyProvider(service:configuration:)` or `APIKeyProvider(store:catalog:)`
/// (the `ODRKit` module).
public actor APIKeyProvider {
  /// Where the provider is in its load (seeds 000/003).
  public enum State: Sendable, Equatable {
    case notRequested, loading, ready
    /// The last load failed; the message says why (never a value).
    case failed(String)
  }

  /// The current state.
  public private(set) var state: State = .notRequested {
    didSet { if state != oldValue { stateUpdates.send(state, keep: true) } }
  }

  private let store: any SecretStore
  private let lock: ImportLock
  private let fetch: @Sendable () async throws -> Void
  /// Values read this lifetime, with when they were read.
  private var cache: [String: (value: String, read: ContinuousClock.Instant)] = [:]
  /// How long a value read from the store is served from memory.
  public nonisolated let freshness: Duration
  /// odr's metadata record, read once a lifetime (by ``apiKey(_:)``).
  private var metadata: KeyMetadataRecord?
  /// What observers were last told, across lifetimes.
  private var published: [String: String] = [:]
  private var reads: [String: Task<String?, any Error>] = [:]
  private var fetching: Task<Void, any Error>?
  private var fetched = false
  /// Bumped when a fetch ends, landed or failed: a read or refresh that
  /// began before it may hold what the fetch replaced, so it caches nothing.
  private var fetchesEnded = 0
  /// How many callers wait for a fetch another started (its tests watch it).
  private(set) var waitingForFetch = 0
  /// Bumped by ``invalidate()``: a read or fetch that started before it
  /// must not cache what it read (it may be the value just rotated out).
  private var generation = 0
  private let changeUpdates = Broadcaster<Set<String>>()
  private let stateUpdates = Broadcaster<State>(latest: .notRequested)

  /// The trust roots (`ed25519:…`) whose imports this provider serves; nil:
  /// any. A key `odr fetch` imported under other roots reads as missing
  /// (the fetch then imports it under these).
  private let roots: Set<String>?

  /// A provider over `store` whose misses run `fetch` (which should put the
  /// keys into `store`, as `KeyImporter` does). `lock` is the service's
  /// import lock (default: the one `odr fetch` uses). `roots`: an app that
  /// pins its publisher's keys is served only keys imported under them
  /// (keys stored by hand have no roots and are served). `freshness`: how
  /// long a value read is served from memory before it is read again.
  public init(store: any SecretStore, lock: ImportLock? = nil, roots: Set<String>? = nil, freshness: Duration = .seconds(10),
              fetch: @escaping @Sendable () async throws -> Void = {}) {
    self.store = store
    self.freshness = freshness
    self.lock = lock ?? ImportLock(for: store)
    self.roots = roots
    self.fetch = fetch
  }

  /// The value of `name`: from memory while fresh, else one keyring
  /// lookup, else after one fetch.
  public func key(_ name: String) async throws -> String {
    if let cached = cache[name], ContinuousClock.now - cached.read < freshness { return cached.value }
    // Whether this lifetime's fetch had finished before the read began: a
    // read that began earlier may have missed what the fetch wrote.
    let fetchedBefore = fetched
    if let value = try await read(name) { return value }
    if !fetchedBefore {
      try await fetchOnce()
      if let value = try await read(name) { return value }
    }
    throw KeyringError(.notFound, "No key '\(name)' for \(store.service), even after fetching the keys.")
  }

  /// The key `name` with its metadata (header, query, hosts…), for clients
  /// that attach keys to requests: ``key(_:)`` and, once a lifetime, odr's
  /// metadata record.
  public func apiKey(_ name: String) async throws -> APIKey {
    let value = try await key(name)
    let record: KeyMetadataRecord
    if let metadata { record = metadata } else {
      let (started, ended) = (generation, fetchesEnded)
      record = try await store.metadataRecord()
      if generation == started, fetchesEnded == ended { metadata = record }
    }
    return APIKey(name: name, value: value, metadata: record[name] ?? KeyMetadata())
  }

  /// Drops the cached values and starts a new lifetime: the next miss
  /// fetches again.
  public func invalidate() {
    generation += 1
    cache = [:]
    metadata = nil
    fetched = false
    reads = [:]
    fetching = nil
    state = .notRequested
  }

  /// Re-reads every key of the store in one search (after an `odr fetch`
  /// elsewhere, say) and tells observers which keys changed.
  public func refresh() async throws {
    let (started, ended) = (generation, fetchesEnded)
    state = .loading
    do {
      let keys = try await store.keys(lock: lock)
      // Invalidated, or a fetch ended meanwhile (and said how it went):
      // what was read may predate it.
      guard generation == started, fetchesEnded == ended else { return }
      let now = ContinuousClock.now
      cache = Dictionary(uniqueKeysWithValues: keys.map { ($0.name, ($0.value, now)) })
      metadata = nil
      publish(cache.mapValues(\.value), complete: true)
      state = .ready
    } catch {
      if generation == started { state = .failed(String(describing: error)) }
      throw error
    }
  }

  /// The names of keys whose value changed (added, changed or removed), each
  /// time the provider reads the store.
  /// The sequence ends when the consuming task is cancelled or the
  /// observation is cancelled with its `cancel()`.
  public func changes() -> KeyObservation<Set<String>> { changeUpdates.observe() }

  /// Every state the provider moves through, starting with the current one.
  public func states() -> KeyObservation<State> { stateUpdates.observe() }

  // MARK: Single flights

  /// One key from the store (nil: not there), read once for all concurrent
  /// callers.
  private func read(_ name: String) async throws -> String? {
    if let reading = reads[name] { return try await reading.value }
    let (store, roots) = (store, roots)
    let task = Task { () async throws -> String? in
      let value: String
      do { value = try await store.keyValue(named: name) } catch let error as KeyringError where error.code == .notFound { return nil }
      // The provenance recorded with this very value (a same-name item
      // another library planted carries none: served as stored by hand).
      if let roots, let imported = try await store.metadataRecord().metadata(for: name, value: value).importedUnder, roots.isDisjoint(with: imported) {
        return nil  // imported under another publisher's roots
      }
      return value
    }
    reads[name] = task
    let (started, ended) = (generation, fetchesEnded)
    if state != .ready { state = .loading }
    defer { if reads[name] == task { reads[name] = nil } }
    do {
      let value = try await task.value
      // Invalidated, or a fetch ended meanwhile (what was read may be what
      // it replaced): answer this caller with it, cache nothing.
      guard generation == started, fetchesEnded == ended else { return value }
      cache[name] = value.map { ($0, ContinuousClock.now) }
      publish([name: value].compactMapValues { $0 }, complete: false, names: [name])
      if fetching == nil { state = .ready }  // else the fetch is still loading
      return value
    } catch {
      if generation == started { state = .failed(String(describing: error)) }
      throw error
    }
  }

  /// Runs the fetch once for all concurrent callers; a failure clears the
  /// flight so the next call retries. The flight settles itself on the
  /// actor (``landed(_:)``, ``failed(_:_:)``) before it completes: callers
  /// waiting for it resume in any order, and none may find the reads that
  /// began before the fetch still standing, or a failed flight still in
  /// the air.
  private func fetchOnce() async throws {
    if fetched { return }
    if let fetching {
      waitingForFetch += 1
      defer { waitingForFetch -= 1 }
      return try await fetching.value
    }
    let started = generation
    let fetch = fetch
    // Not isolated to the provider: the fetch starts at once, not behind
    // the callers queued on the actor; only its ending hops onto it.
    let flight: @Sendable () async throws -> Void = {
      do { try await fetch() } catch {
        await self.failed(started, error)
        throw error
      }
      await self.landed(started)
    }
    let task = Task(operation: flight)
    fetching = task
    state = .loading
    try await task.value
  }

  /// A fetch of lifetime `started` succeeded: what it changed is read
  /// anew, by reads that begin after it.
  private func landed(_ started: Int) {
    guard generation == started else { return }  // invalidated meanwhile
    fetching = nil
    fetched = true
    ended()
    state = .ready
  }

  /// A fetch of lifetime `started` failed: the next call tries again, and
  /// what it may have written before failing is read anew.
  private func failed(_ started: Int, _ error: any Error) {
    guard generation == started else { return }  // invalidated meanwhile
    fetching = nil
    ended()
    state = .failed(String(describing: error))
  }

  /// Forgets what was read before a fetch ended.
  private func ended() {
    fetchesEnded += 1
    cache = [:]
    reads = [:]
    metadata = nil
  }

  /// Tells observers which of `names` (every key, when `complete`) changed
  /// since they last heard, given their `values` now.
  private func publish(_ values: [String: String], complete: Bool, names: Set<String> = []) {
    let names = complete ? Set(values.keys).union(published.keys) : names
    let changed = names.filter { published[$0] != values[$0] }
    for name in names { published[name] = values[name] }
    if !changed.isEmpty { changeUpdates.send(changed) }
  }
}
