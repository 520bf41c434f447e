public import FoundationEssentials
import Synchronization

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
  /// The tags this request covers.
  public let tags: Set<String>
  public let catalog: ResourceCatalog
  private let resolved: [Catalog.Tag]
  private let accessing = Mutex(false)

  /// Creates a request; throws `.notFound` for a tag the catalog lacks.
  public init(tags: Set<String>, catalog: ResourceCatalog) throws {
    self.tags = tags
    self.catalog = catalog
    self.resolved = try tags.sorted().map { try catalog.tag($0) }
  }

  deinit { endAccessing() }

  /// Called with (bytes downloaded, bytes to download) as data arrives.
  public typealias Progress = @Sendable (Int64, Int64) -> Void

  /// Downloads what is missing, verifies it, and pins the tags. `progress`
  /// hears of every chunk; cancel the task to cancel the request.
  public func beginAccessing(progress: Progress? = nil) async throws {
    try await catalog.install(resolved, progress: progress)
    try? await catalog.store.usage.touch(tags.sorted())  // purge order only: never fails a request
    accessing.withLock { $0 = true }
  }

  /// Pins the tags if everything is already on disk; never touches the
  /// network. Returns whether the resources are available.
  public func conditionallyBeginAccessing() -> Bool {
    guard catalog.isInstalled(resolved) else { return false }
    accessing.withLock { $0 = true }
    return true
  }

  /// Unpins the tags; their files may be purged later.
  public func endAccessing() {
    accessing.withLock { $0 = false }
  }

  /// Whether the request is between a successful begin and its end.
  public var isAccessing: Bool { accessing.withLock { $0 } }

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
