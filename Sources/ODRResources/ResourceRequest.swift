public import ODRBase
public import FoundationEssentials
import Synchronization
import ODRCatalog
#if canImport(Glibc)
import Glibc
#endif

/// A request for tagged resources, after Apple's `NSBundleResourceRequest`.
///
/// ```swift
/// let catalog = try await ResourceCatalog.load(from: URL(filePath: "/srv/odr"))
/// let request = try ResourceRequest(tags: ["Onboarding"], catalog: catalog)
/// try await request.beginAccessing()          // download, verify, pin
/// let image = try request.url(forResource: "Onboarding/welcome.png")
/// request.endAccessing()                      // unpin (also on deinit)
/// ```
///
/// Unknown tags fail at creation (Apple's error 4994). Cancelling the task
/// running `beginAccessing()` stops the download and installs nothing
/// partial; blobs already verified stay in the store.
public final class ResourceRequest: Sendable {
  /// Where a request is (seeds 000/003, observable with ``states()``).
  public enum State: Sendable, Equatable {
    case notRequested, loading, available
    /// The last attempt failed; the message says why.
    case failed(String)
  }

  /// How far a load is, in bytes and files still to download.
  public struct LoadProgress: Sendable, Equatable {
    public let bytesCompleted: Int64
    public let bytesTotal: Int64
    public let filesCompleted: Int
    public let filesTotal: Int
    /// The part of `bytesCompleted` an interrupted download had kept on
    /// disk: resumed, not downloaded by this load (a rate leaves it out).
    public let bytesResumed: Int64
    /// What just happened to the file being downloaded, for a display to
    /// say; nil on a plain update.
    public let event: Event?

    /// A resume, or a resume the source refused.
    public enum Event: Sendable, Equatable {
      /// `path` goes on from `offset` of its `size` bytes.
      case resumed(path: String, offset: Int64, size: Int64)
      /// The source sent `path` whole instead of the rest (it ignores
      /// ranges, or the file changed): `discarded` kept bytes are gone.
      case restarted(path: String, discarded: Int64)
    }

    public init(bytesCompleted: Int64, bytesTotal: Int64, filesCompleted: Int, filesTotal: Int,
                bytesResumed: Int64 = 0, event: Event? = nil) {
      self.bytesCompleted = bytesCompleted
      self.bytesTotal = bytesTotal
      self.filesCompleted = filesCompleted
      self.filesTotal = filesTotal
      self.bytesResumed = bytesResumed
      self.event = event
    }
  }

  /// Called with (bytes downloaded, bytes to download) as data arrives.
  public typealias Progress = @Sendable (Int64, Int64) -> Void

  /// Called with each ``LoadProgress`` as data arrives and when a download
  /// resumes or starts over.
  public typealias LoadObserver = @Sendable (LoadProgress) -> Void

  /// The loading priority that goes before every other (Apple's
  /// `NSBundleResourceRequestLoadingPriorityUrgent`).
  public static let urgent = Double.greatestFiniteMagnitude

  /// How soon this request's downloads get a slot among this process's
  /// downloads: 0…1, or ``urgent``. Default 0.5. Changing it moves the
  /// request's waiting downloads at once.
  public var loadingPriority: Double {
    get { shared.withLock { $0.priority } }
    set {
      let priority = newValue == Self.urgent ? newValue : min(1, max(0, newValue))
      shared.withLock { $0.priority = priority }
      let (scheduler, id) = (catalog.scheduler, id)
      // Whatever order these tasks run in, each applies the latest value.
      Task { [weak self] in
        guard let self else { return }
        await scheduler.reprioritize(id, to: self.loadingPriority)
      }
    }
  }

  /// The tags this request covers.
  public let tags: Set<String>
  public let catalog: ResourceCatalog
  private let resolved: [Catalog.Tag]
  private struct Shared {
    var accessing = false
    var pinned = false
    var priority = 0.5
    var state = State.notRequested
    var loading: Task<Void, any Error>?
  }
  private let shared = Mutex(Shared())
  private let stateUpdates = Broadcaster<State>(latest: .notRequested)
  private let progress = Broadcaster<LoadProgress>()
  private let id = UUID()
  private let holder: Int32

  /// Creates a request; throws `.notFound` for a tag the catalog lacks and
  /// `.secretsTag` for a secrets tag (its keys go to the keyring through
  /// ODRKeys' `KeyImporter`, never to files an app reads). `holder`: the
  /// pid whose lease pins the tags — nil for this process, or (`odr begin`)
  /// the shell that asked; a lease dies with its holder.
  public init(tags: Set<String>, catalog: ResourceCatalog, holder: Int32? = nil) throws {
    self.tags = tags
    self.catalog = catalog
    self.holder = holder ?? getpid()
    self.resolved = try tags.sorted().map { try catalog.tag($0) }
    if let secret = tags.sorted().first(where: { catalog.catalog.tags[$0]?.secrets == true }) {
      throw ResourceError(.secretsTag, "\(secret) is a secrets tag: its API keys are never written to disk as files. Import them into the keyring with `odr fetch \(secret)`, or inject them with `odr exec --fetch \(secret) -- CMD`.")
    }
  }

  deinit { endAccessing() }

  /// Downloads what is missing, verifies it, and pins the tags. `progress`
  /// hears of every chunk (so do ``progressUpdates()`` observers); cancel
  /// the task, or call ``cancel()``, to cancel the request.
  public func beginAccessing(progress: Progress? = nil) async throws {
    var observer: LoadObserver?
    if let progress { observer = { update in progress(update.bytesCompleted, update.bytesTotal) } }
    try await beginAccessing(observing: observer)
  }

  /// ``beginAccessing(progress:)``, with the whole ``LoadProgress`` (files,
  /// resumed bytes, resumes) for a display that says more than bytes.
  public func beginAccessing(observing observer: LoadObserver?) async throws {
    // Pin first (a lease held by this process), so no purge takes the files
    // between download and use; a failed begin takes its pin back.
    let pinnedHere = try await pin()
    let task = Task {
      try await catalog.install(resolved, ticket: (id, { [weak self] in self?.loadingPriority ?? 0.5 })) { [self] update in
        observer?(update)
        publish(update)
      }
    }
    setState(.loading, loading: task)
    do {
      try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
    } catch {
      if pinnedHere { unpin() }
      setState(.failed(error is CancellationError ? "Cancelled." : String(describing: error)), loading: nil)
      throw error
    }
    await droppingAsync(.bestEffort) { try await catalog.store.usage.touch(tags.sorted()) }  // purge order only: never fails a request
    shared.withLock { $0.accessing = true }
    setState(.available, loading: nil)
  }

  /// Cancels a ``beginAccessing(progress:)`` in flight (Apple's
  /// `progress.cancel()`): it throws `CancellationError` and installs
  /// nothing partial.
  public func cancel() {
    shared.withLock { $0.loading }?.cancel()
  }

  /// Pins the tags if everything is already on disk; never touches the
  /// network. Returns whether the resources are available.
  public func conditionallyBeginAccessing() -> Bool {
    // Check for a lease and claim it in one critical section: two calls at
    // once must not both take one (one would outlive endAccessing()).
    let claimed = shared.withLock { state -> Bool in
      defer { state.pinned = true }
      return !state.pinned
    }
    // a pin that cannot be written reads as not available (this API answers a Bool)
    let pinnedHere = claimed && (dropping(.isTheAnswer) { try catalog.store.pins.pinNow(tags.sorted(), owner: holder) }) != nil
    if claimed && !pinnedHere { shared.withLock { $0.pinned = false } }
    guard catalog.isInstalled(resolved) else {
      if pinnedHere { unpin() }
      return false
    }
    shared.withLock { $0.accessing = true }
    setState(.available, loading: nil)
    return true
  }

  /// Leaves the lease with its holder instead of giving it back when the
  /// request ends: `odr begin` exits while the shell that asked keeps the
  /// tags until `odr end` or until it exits.
  public func keepLeaseForHolder() {
    shared.withLock { $0.pinned = false }
  }

  /// Unpins the tags; their files may be purged later.
  public func endAccessing() {
    shared.withLock { $0.accessing = false }
    unpin()
  }

  /// Takes the holder's lease on the tags unless the request holds one already.
  /// Returns whether it took one now.
  private func pin() async throws -> Bool {
    let take = shared.withLock { state -> Bool in
      defer { state.pinned = true }
      return !state.pinned
    }
    guard take else { return false }
    do { try await catalog.store.pins.pin(tags.sorted(), owner: holder) } catch {
      shared.withLock { $0.pinned = false }
      throw error
    }
    return true
  }

  /// Gives the holder's lease on the tags back, if the request holds one.
  private func unpin() {
    let held = shared.withLock { state -> Bool in
      defer { state.pinned = false }
      return state.pinned
    }
    guard held else { return }
    // a lease left by a failed rewrite is reclaimed when its holder exits; ending never fails (as NSBundleResourceRequest's)
    dropping(.bestEffort) { try catalog.store.pins.unpinNow(tags.sorted(), owner: holder) }
  }

  /// Whether the request is between a successful begin and its end.
  public var isAccessing: Bool { shared.withLock { $0.accessing } }

  /// The current state.
  public var state: State { shared.withLock { $0.state } }

  /// Every state the request moves through, starting with the current one;
  /// ends when cancelled or when the consuming task ends (seed 002).
  public func states() -> ObservationStream<State> { stateUpdates.observe() }

  /// The progress of loads, in bytes and files; ends like ``states()``.
  public func progressUpdates() -> ObservationStream<LoadProgress> { progress.observe() }

  private func setState(_ state: State, loading: Task<Void, any Error>?) {
    shared.withLock {
      $0.loading = loading
      guard $0.state != state else { return }
      $0.state = state
      stateUpdates.send(state, keep: true)
    }
  }

  private func publish(_ progress: LoadProgress) {
    self.progress.send(progress)
  }

  /// The local file holding `path` (a path from the catalog, such as
  /// `Onboarding/welcome.png`). Checks the size on every call; throws
  /// `.notFound` for a path outside the request's tags or not installed,
  /// and `.integrity` when the file on disk was damaged.
  public func url(forResource path: String) throws -> URL {
    guard isAccessing else {
      throw ResourceError(.notFound, "Resources of \(tags.sorted().joined(separator: ", ")) are not being accessed; call beginAccessing() first.")
    }
    guard let file = resolved.lazy.flatMap(\.files).first(where: { $0.path == path }) else {
      throw ResourceError(.notFound, "No file '\(path)' in tags \(tags.sorted().joined(separator: ", ")).")
    }
    let url = catalog.store.blobURL(file.sha256)
    guard catalog.store.contains(file) else {
      throw ResourceError(.integrity, "'\(path)' is missing or damaged on disk; begin access again to re-download it.")
    }
    return url
  }
}

/// Runs `body` with `tags` accessed, ending access when it returns or throws.
public func withResources<T>(tags: Set<String>, catalog: ResourceCatalog,
                             _ body: (ResourceRequest) async throws -> T) async throws -> T {
  let request = try ResourceRequest(tags: tags, catalog: catalog)
  try await request.beginAccessing()
  defer { request.endAccessing() }
  return try await body(request)
}
