public import FoundationEssentials
public import ODRKeyring
public import ODRResources
public import ODRTrust

/// Serves API keys to an app: `try await provider.key("Weather")`.
///
/// Reads the store; when a key is missing it runs the fetch of the
/// configured tag once, however many callers are waiting (single flight),
/// then answers them all. Values are cached in memory until
/// ``invalidate()``. A failed fetch is not sticky: the next call tries again.
/// The fetch runs at most once per lifetime while it succeeds (seeds 000
/// and 003); `invalidate()` starts a new lifetime.
///
/// ```swift
/// let provider = APIKeyProvider(store: try SecretServiceStore(service: "com.example.demo"),
///                               catalog: URL(filePath: "/srv/odr"))
/// let key = try await provider.key("Weather")
/// for await names in provider.changes() { print("changed:", names) }
/// ```
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
  private let fetch: @Sendable () async throws -> Void
  private var cache: [String: String]?
  private var metadata = KeyMetadataRecord(json: nil)
  private var published: [String: String] = [:]
  private var loading: Task<Snapshot, any Error>?
  private var fetching: Task<Snapshot, any Error>?
  private var fetched = false
  /// Bumped by ``invalidate()``: a read or fetch that started before it
  /// must not cache what it read (it may be the value just rotated out).
  private var generation = 0
  private let changeUpdates = Broadcaster<Set<String>>()
  private let stateUpdates = Broadcaster<State>(latest: .notRequested)

  /// A provider over `store` whose misses run `fetch` (which should put the
  /// keys into `store`, as ``KeyImporter`` does).
  public init(store: any SecretStore, fetch: @escaping @Sendable () async throws -> Void) {
    self.store = store
    self.fetch = fetch
  }

  /// A provider whose misses run `odr fetch TAG` against `catalog`,
  /// admitted under `trust` (pin the publisher's key there). Encrypted tags
  /// are opened with `identities` (default: `ODR_IDENTITY`, else the
  /// identities in the keyring, as the CLI does).
  public init(store: any SecretStore, catalog: URL, tag: String = "APIKeys", cacheHome: URL? = nil,
              trust: TrustPolicy = TrustPolicy(), identities: (@Sendable () async throws -> [AgeIdentity])? = nil) {
    let identities = identities ?? {
      try await PrivateKeyring.identities(environment: ProcessInfo.processInfo.environment["ODR_IDENTITY"], files: []) {
        try SecretServiceStore(service: PrivateKeyring.identityService)
      }
    }
    self.init(store: store) {
      let resources = try await ResourceCatalog.load(from: catalog, cacheHome: cacheHome, trust: trust)
      _ = try await KeyImporter(catalog: resources, store: store, identities: identities).fetch(tags: [tag])
    }
  }

  /// The value of `name`: from memory, else the store, else after one fetch.
  public func key(_ name: String) async throws -> String {
    if let value = cache?[name] { return value }
    if let value = try await load()[name] { return value }
    if !fetched, let value = try await fetchOnce()[name] { return value }
    throw KeyringError(.notFound, "No key '\(name)' for \(store.service), even after fetching the keys.")
  }

  /// The key `name` with its metadata (header, query, hosts…), for clients
  /// that attach keys to requests.
  public func apiKey(_ name: String) async throws -> APIKey {
    let value = try await key(name)
    return APIKey(name: name, value: value, metadata: metadata[name] ?? KeyMetadata())
  }

  /// Drops the cached values and starts a new lifetime: the next miss
  /// fetches again.
  public func invalidate() {
    generation += 1
    cache = nil
    fetched = false
    loading = nil
    fetching = nil
    state = .notRequested
  }

  /// Re-reads the store (after an `odr fetch` elsewhere, say) and tells
  /// observers which keys changed.
  public func refresh() async throws {
    _ = try await load(reload: true)
  }

  /// The names of keys whose value changed (added, changed or removed), each
  /// time the provider reads the store.
  /// The sequence ends when the consuming task is cancelled or the
  /// observation is cancelled with its `cancel()`.
  public func changes() -> KeyObservation<Set<String>> { changeUpdates.observe() }

  /// Every state the provider moves through, starting with the current one.
  public func states() -> KeyObservation<State> { stateUpdates.observe() }

  // MARK: Single flights

  /// All values of the store, read once for all concurrent callers.
  private func load(reload: Bool = false) async throws -> [String: String] {
    if !reload, let cache { return cache }
    if let loading { return try await loading.value.values }
    let task = Task { try await Snapshot(of: store) }
    loading = task
    let started = generation
    if state != .ready { state = .loading }
    defer { if loading == task { loading = nil } }
    do {
      let snapshot = try await task.value
      // Invalidated meanwhile: answer this caller, cache nothing.
      guard generation == started else { return snapshot.values }
      let values = publish(snapshot)
      state = .ready
      return values
    } catch {
      if generation == started { state = .failed(String(describing: error)) }
      throw error
    }
  }

  /// Runs the fetch, then reads the store, once for all concurrent
  /// callers; a failure clears the flight so the next call retries.
  private func fetchOnce() async throws -> [String: String] {
    if let fetching { return try await fetching.value.values }
    let (store, fetch) = (store, fetch)
    let task = Task {
      try await fetch()
      return try await Snapshot(of: store)
    }
    fetching = task
    let started = generation
    state = .loading
    defer { if fetching == task { fetching = nil } }
    do {
      let snapshot = try await task.value
      guard generation == started else { return snapshot.values }
      let values = publish(snapshot)
      fetched = true
      state = .ready
      return values
    } catch {
      if generation == started { state = .failed(String(describing: error)) }
      throw error
    }
  }

  /// The keys and their metadata as read from the store in one search,
  /// after rolling back an interrupted import.
  private struct Snapshot: Sendable {
    let values: [String: String]
    let metadata: String?

    init(of store: any SecretStore) async throws {
      let items = try await ImportJournal.settledItems(of: store, lock: ImportLock(service: store.service))
      values = items.filter { !KeyringInput.isRecord($0.key) }
      metadata = items[KeyringInput.metadataName]
    }
  }

  /// Caches a snapshot, tells observers which keys changed, and returns the
  /// keys.
  private func publish(_ snapshot: Snapshot) -> [String: String] {
    metadata = KeyMetadataRecord(json: snapshot.metadata)
    let values = snapshot.values
    let old = published
    cache = values
    published = values
    let changed = Set(values.keys.filter { old[$0] != values[$0] }).union(old.keys.filter { values[$0] == nil })
    if !changed.isEmpty {
      changeUpdates.send(changed)
    }
    return values
  }
}
