public import FoundationEssentials
import Crypto
#if canImport(Glibc)
import Glibc
#endif

/// The on-disk store of one bundle (DESIGN §4):
/// `${XDG_CACHE_HOME:-~/.cache}/odr/<bundle>/`, folders 0700, files 0600.
///
/// ```
/// catalog.json        the newest catalog seen (rollback protection, offline use)
/// blobs/<sha256>      verified file contents, content-addressed
/// partial/<sha256>    a download in progress (only while its lock is held)
/// locks/              flock files: one per blob, one for the catalog, one for pins
/// pins.json           pins, as leases held by live processes (PinLedger)
/// ```
///
/// Installs are atomic: bytes go to `partial/`, are hashed while they
/// stream, flushed, and renamed into `blobs/` only when the SHA-256 and size
/// match. Processes coordinate with `flock`, so concurrent installs of a
/// blob download it once, and a killed process leaves at most a partial file
/// that the next install of that blob overwrites.
public struct LocalStore: Sendable {
  /// The bundle this store belongs to.
  public let bundle: String
  /// The store's folder.
  public let root: URL

  /// Opens (creating if needed) the store for `bundle` under `cacheHome`
  /// (default `$XDG_CACHE_HOME`, else `~/.cache`).
  public init(bundle: String, cacheHome: URL? = nil) throws {
    guard Naming.isValidBundle(bundle) else {
      throw ResourceError(.invalidSource, "'\(bundle)' is not a bundle id.")
    }
    self.bundle = bundle
    self.root = (cacheHome ?? Self.defaultCacheHome()).appending(path: "odr").appending(path: bundle)
    try FileIO.makePrivateDirectory(root)
    for folder in ["blobs", "partial", "locks"] {
      try FileIO.makePrivateDirectory(root.appending(path: folder))
    }
  }

  static func defaultCacheHome() -> URL { XDGFolders.cacheHome }

  // MARK: Catalog

  /// The newest catalog this store has accepted, if any.
  public func cachedCatalog() -> Catalog? {
    guard let data = try? Data(contentsOf: root.appending(path: "catalog.json")) else { return nil }
    return try? Catalog.decode(data)
  }

  /// Keeps `catalog` as the current one (for `--offline` and purging). Its
  /// admission — rollback, signature, expiry — was decided before, by the
  /// trust state (``TrustPolicy``), which lives outside the cache.
  public func accept(_ catalog: Catalog) async throws {
    guard catalog.bundle == bundle else {
      throw ResourceError(.invalidSource, "The catalog is for '\(catalog.bundle)', not '\(bundle)'.")
    }
    try await FileIO.withLock(root.appending(path: "locks/catalog")) {
      if cachedCatalog() == catalog { return }
      try FileIO.atomicWrite(catalog.encoded(), to: root.appending(path: "catalog.json"), mode: 0o600)
    }
  }

  // MARK: Blobs

  /// Where a verified blob lives.
  public func blobURL(_ sha256: String) -> URL { root.appending(path: "blobs").appending(path: sha256) }

  /// True when the blob is installed with the right size: the cheap check
  /// done on every read (the full hash is checked when it is installed).
  public func contains(_ file: Catalog.File) -> Bool {
    FileIO.size(of: blobURL(file.sha256)) == file.size
  }

  /// Installs `file` from `source` unless it is already there. Hashes the
  /// bytes as they arrive; a mismatch installs nothing. `progress` is told
  /// how many bytes each chunk brought.
  public func install(_ file: Catalog.File, from source: URL, transport: any BlobTransport,
                      progress: (Int) -> Void = { _ in }) async throws {
    if contains(file) { return }
    try await FileIO.withLock(root.appending(path: "locks/\(file.sha256)")) {
      if contains(file) { return }  // another process installed it while we waited
      let partial = root.appending(path: "partial").appending(path: file.sha256)
      let fd = open(partial.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
      guard fd >= 0 else { throw FileIO.error("Cannot create '\(partial.path)'") }
      var closed = false
      defer {
        if !closed { close(fd) }
        unlink(partial.path)
      }
      var hasher = SHA256()
      var size: Int64 = 0
      try await transport.stream(source) { chunk in
        size += Int64(chunk.count)
        guard size <= file.size else {
          throw ResourceError(.integrity, "'\(file.path)' is larger than the catalog says (\(file.size) bytes); nothing was installed. The catalog or the server is wrong.")
        }
        hasher.update(bufferPointer: chunk)
        try FileIO.writeAll(fd, chunk, path: partial.path)
        progress(chunk.count)
      }
      let digest = FileIO.hex(hasher.finalize())
      guard size == file.size, digest == file.sha256 else {
        throw ResourceError(.integrity, "'\(file.path)' does not match the catalog (\(size == file.size ? "SHA-256 differs" : "\(size) of \(file.size) bytes")); nothing was installed. Try again; if it persists the publisher's blob is damaged.")
      }
      guard fsync(fd) == 0 else { throw FileIO.error("Cannot write '\(partial.path)'") }
      close(fd)
      closed = true
      guard rename(partial.path, blobURL(file.sha256).path) == 0 else { throw FileIO.error("Cannot install '\(file.path)'") }
      FileIO.syncDirectory(root.appending(path: "blobs"))
    }
  }

  /// Removes partial downloads left by processes that died: a partial file
  /// whose blob lock nobody holds is stale.
  public func removeStalePartials() {
    let partial = root.appending(path: "partial")
    for name in (try? FileManager.default.contentsOfDirectory(atPath: partial.path)) ?? [] {
      let fd = open(root.appending(path: "locks/\(name)").path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
      guard fd >= 0 else { continue }
      if flock(fd, LOCK_EX | LOCK_NB) == 0 { unlink(partial.appending(path: name).path) }
      close(fd)
    }
  }

  /// Deletes blobs (for example the plaintext of a secrets tag). Blobs still
  /// used by another tag of `catalog` are kept.
  public func remove(_ files: [Catalog.File], keepingThoseUsedBy otherTags: [Catalog.Tag] = []) {
    let kept = Set(otherTags.flatMap { $0.files.map(\.sha256) })
    for file in files where !kept.contains(file.sha256) {
      unlink(blobURL(file.sha256).path)
    }
  }

  // MARK: Checking

  /// Re-hashes every installed blob: the names of those whose SHA-256 is
  /// not their name (damaged on disk), and how many were checked.
  public func verify() -> (checked: Int, damaged: [String]) {
    let blobs = root.appending(path: "blobs")
    var damaged: [String] = []
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: blobs.path)) ?? []).sorted()
    for name in names {
      let hash = try? FileIO.sha256(of: blobs.appending(path: name)).sha256
      if hash != name { damaged.append(name) }
    }
    return (names.count, damaged)
  }

  // MARK: Purging

  /// The store's record of last uses and run-time priorities.
  public var usage: TagUsage { TagUsage(file: root.appending(path: "usage.json"), lock: root.appending(path: "locks/usage")) }

  /// Each installed blob and its size.
  func blobSizes() -> [String: Int64] {
    let blobs = root.appending(path: "blobs")
    var sizes: [String: Int64] = [:]
    for name in (try? FileManager.default.contentsOfDirectory(atPath: blobs.path)) ?? [] {
      if let size = FileIO.size(of: blobs.appending(path: name)) { sizes[name] = size }
    }
    return sizes
  }

  /// Bytes in the store's blobs.
  public var size: Int64 { blobSizes().values.reduce(0, +) }

  /// Plans a purge (see ``PurgePlan``) and, unless `dryRun`, carries it out,
  /// each blob under its lock, the whole purge under `locks/purge`.
  public func purge(catalog: Catalog, budget: Int64?, all: Bool, dryRun: Bool, reserve: Int64 = 0,
                    protecting: Set<String> = []) async throws -> PurgePlan {
    try await FileIO.withLock(root.appending(path: "locks/purge")) {
      let plan = PurgePlan.make(store: self, catalog: catalog, budget: budget, reserve: reserve, all: all, protecting: protecting)
      guard !dryRun else { return plan }
      for removal in plan.removals {
        for blob in removal.blobs {
          // Under the pins lock: a tag pinned since the plan was made keeps
          // its files, and a pin taken after this sees them gone and
          // downloads them again — never a pinned tag with missing files.
          try await FileIO.withLock(pins.lock) {
            let pinned = Set(pins.leases().map(\.tag))
            guard !catalog.tags.contains(where: { pinned.contains($0.key) && $0.value.files.contains { $0.sha256 == blob } }) else { return }
            try await FileIO.withLock(root.appending(path: "locks/\(blob)")) { _ = unlink(blobURL(blob).path) }
          }
        }
      }
      return plan
    }
  }

  // MARK: Pins

  /// The store's pins, as leases held by processes.
  public var pins: PinLedger { PinLedger(file: root.appending(path: "pins.json"), lock: root.appending(path: "locks/pins")) }
}
