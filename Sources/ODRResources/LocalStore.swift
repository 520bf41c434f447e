public import FoundationEssentials
import Crypto
import ODRBase
public import ODRCatalog
public import ODRTransports
#if canImport(Glibc)
import Glibc
#endif

/// The on-disk store of one bundle (docs/design.md, "Local store"):
/// `${XDG_CACHE_HOME:-~/.cache}/odr/<bundle>/`, folders 0700, files 0600.
///
/// ```
/// catalog.json        the newest catalog seen (rollback protection, offline use)
/// blobs/<sha256>      verified file contents, content-addressed
/// partial/<sha256>    a download in progress or interrupted (+ .resume: its validators)
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
  /// The clock its uses and leases are dated by.
  let now: @Sendable () -> Date

  /// Opens (creating if needed) the store for `bundle` under `cacheHome`
  /// (default `$XDG_CACHE_HOME`, else `~/.cache`).
  /// `now`: the clock uses and leases are dated by (a catalog's store
  /// gets its trust policy's, so a test or a command's context moves one
  /// clock for everything).
  public init(bundle: String, cacheHome: URL? = nil, now: @escaping @Sendable () -> Date = { Date() }) throws {
    guard BundleID.isValid(bundle) else {
      throw ResourceError(.invalidSource, "'\(bundle)' is not a bundle id.")
    }
    self.bundle = bundle
    self.now = now
    self.root = (cacheHome ?? Self.defaultCacheHome()).appending(path: "odr").appending(path: bundle)
    for folder in ["", "blobs", "partial", "locks"] {
      try FileIO.makePrivateDirectory(folder.isEmpty ? root : root.appending(path: folder), for: "the download cache of \(bundle)")
    }
  }

  static func defaultCacheHome() -> URL { XDGFolders.ofProcess.cacheHome }

  // MARK: Catalog

  /// The kept catalog's exact bytes and its signature file's (nil when it
  /// was unsigned), or nil when none is kept.
  func keptCatalogBytes() throws -> (catalog: Data, signature: Data?)? {
    guard FileIO.kind(of: root.appending(path: "catalog.json")) != .missing else { return nil }
    // The pair is written under the exclusive lock (``accept(_:bytes:signature:)``):
    // read without it, a reader could see a new signature beside an old
    // catalog and refuse a good pair.
    return try FileLock(url: root.appending(path: "locks/catalog")).withSharedNow { try keptCatalogBytesLocked() }
  }

  /// ``keptCatalogBytes()`` for a caller that holds the catalog lock.
  private func keptCatalogBytesLocked() throws -> (catalog: Data, signature: Data?)? {
    let catalogFile = root.appending(path: "catalog.json"), signatureFile = root.appending(path: "catalog.json.sig")
    do {
      guard FileIO.kind(of: catalogFile) != .missing else { return nil }
      let catalog = try Data(contentsOf: catalogFile)
      let signature = FileIO.kind(of: signatureFile) == .missing ? nil : try Data(contentsOf: signatureFile)
      return (catalog, signature)
    } catch {
      throw FileIO.error("Cannot read the kept catalog in '\(root.path)'", error)
    }
  }

  /// Keeps `catalog` as the current one (for `--offline` and purging),
  /// as the exact `bytes` it was accepted from and their signature file, so
  /// that every later use can check it again. Its admission — rollback,
  /// signature, expiry — was decided before, by the trust state
  /// (`TrustPolicy`), which lives outside the cache.
  public func accept(_ catalog: Catalog, bytes: Data, signature: Data?) async throws {
    guard catalog.bundle == bundle else {
      throw ResourceError(.invalidSource, "The catalog is for '\(catalog.bundle)', not '\(bundle)'.")
    }
    let catalogFile = root.appending(path: "catalog.json"), signatureFile = root.appending(path: "catalog.json.sig")
    try await FileLock(url: root.appending(path: "locks/catalog")).withExclusive {
      // (An unreadable kept copy is simply replaced.)
      if let kept = dropping(.isTheAnswer, { try keptCatalogBytesLocked() }), kept.catalog == bytes, kept.signature == signature { return }
      // The signature goes first: a reader between the two writes sees a
      // pair that does not verify and refuses it, never a wrong one.
      if let signature {
        try FileIO.atomicWrite(signature, to: signatureFile, mode: 0o600)
      } else if unlink(signatureFile.path) != 0 && errno != ENOENT {
        throw FileIO.error("Cannot remove '\(signatureFile.path)'")
      }
      try FileIO.atomicWrite(bytes, to: catalogFile, mode: 0o600)
    }
  }

  /// When the source last confirmed the kept catalog: the modification time
  /// of the kept catalog.json, which a load from the source sets (written,
  /// or revalidated unchanged). nil when none is kept.
  public var catalogCheckedAt: Date? {
    var info = stat()
    guard stat(root.appending(path: "catalog.json").path, &info) == 0 else { return nil }
    return Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
  }

  /// The bytes of `files` that interrupted downloads kept on disk and the
  /// next install can resume from (a partial file with the validators of
  /// its response).
  public func resumableBytes(of files: [Catalog.File]) -> Int64 {
    let partial = root.appending(path: "partial")
    return Set(files.map(\.sha256)).reduce(0) { total, sha256 in
      guard FileIO.kind(of: partial.appending(path: sha256 + ".resume")) == .file else { return total }
      return total + (FileIO.size(of: partial.appending(path: sha256)) ?? 0)
    }
  }

  /// Records that the source confirmed the kept catalog just now.
  func markCatalogChecked() {
    // Best effort: a time left unset only makes `odr status` call the kept
    // catalog older than it is.
    _ = utimensat(AT_FDCWD, root.appending(path: "catalog.json").path, nil, 0)
  }

  // MARK: Blobs

  /// Where a verified blob lives.
  public func blobURL(_ sha256: String) -> URL { root.appending(path: "blobs").appending(path: sha256) }

  /// True when the blob is installed with the right size: the cheap check
  /// done on every read (the full hash is checked when it is installed).
  public func contains(_ file: Catalog.File) -> Bool {
    FileIO.size(of: blobURL(file.sha256)) == file.size
  }

  /// What an install tells its observer as it goes.
  public enum InstallEvent: Sendable, Equatable {
    /// A chunk of this many bytes arrived.
    case bytes(Int)
    /// The download goes on from this offset: the bytes before it were kept
    /// on disk by an interrupted download (and re-hashed), not downloaded.
    case resumed(at: Int64)
    /// Resuming was asked but the source sent the whole file (it ignores
    /// ranges, or the file changed): the kept bytes were discarded.
    case restarted(discarding: Int64)
  }

  /// Installs `file` from `source` unless it is already there. Hashes the
  /// bytes as they arrive; a mismatch installs nothing. `progress` is told
  /// of each chunk and of a resume.
  ///
  /// An interrupted download (a dropped connection, a killed process) keeps
  /// its partial file and the validators of its response; the next install
  /// re-hashes that prefix and asks the source for the rest (`Range` with
  /// `If-Range`). A source that answers with the whole blob instead starts
  /// it over. Only a hash or size mismatch throws the partial file away.
  public func install(_ file: Catalog.File, from source: URL, transport: any BlobTransport,
                      progress: (InstallEvent) -> Void = { _ in }) async throws {
    if contains(file) { return }
    try await FileLock(url: root.appending(path: "locks/\(file.sha256)")).withExclusive {
      if contains(file) { return }  // another process installed it while we waited
      let partial = root.appending(path: "partial").appending(path: file.sha256)
      let resumeFile = root.appending(path: "partial").appending(path: file.sha256 + ".resume")
      let fd = open(partial.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
      guard fd >= 0 else { throw FileIO.error("Cannot create '\(partial.path)'") }
      var closed = false
      defer { if !closed { close(fd) } }
      func discard() {
        unlink(partial.path)
        unlink(resumeFile.path)
      }
      var hasher = SHA256()
      var size: Int64 = 0
      var resume: ResumePoint?
      if let kept = FileIO.size(of: partial), kept > 0, kept < file.size,
         // no readable resume point: the download starts over (the final hash covers the blob)
         let data = dropping(.isTheAnswer, { try Data(contentsOf: resumeFile) }), let validators = dropping(.isTheAnswer, { try JSONReader.decode(CacheValidators.self, from: data) }),
         validators.ifRange != nil {
        // Re-hash what is kept: the final check covers the whole blob.
        try FileIO.readChunks(of: partial) { hasher.update(bufferPointer: $0) }
        size = kept
        resume = ResumePoint(offset: kept, validators: validators)
      }
      do {
        try await transport.stream(source, resume: resume, start: { offset, validators in
          if offset == 0 {
            // Resuming was refused, or a mirror sends the whole file after
            // another sent a part: what was kept or counted goes.
            if size > 0 { progress(.restarted(discarding: size)) }
            hasher = SHA256()
            size = 0
          }
          guard ftruncate(fd, off_t(offset)) == 0, lseek(fd, off_t(offset), SEEK_SET) == offset else {
            throw FileIO.error("Cannot write '\(partial.path)'")
          }
          // encoding two strings cannot fail
          if validators.ifRange != nil, let data = dropping(.cannotFail, { try JSONEncoder().encode(validators) }) {
            try FileIO.atomicWrite(data, to: resumeFile, mode: 0o600)
          } else {
            unlink(resumeFile.path)
          }
          if offset > 0 { progress(.resumed(at: offset)) }
        }) { chunk in
          size += Int64(chunk.count)
          guard size <= file.size else {
            throw ResourceError(.integrity, "'\(file.path)' is larger than the catalog says (\(file.size) bytes); nothing was installed. The catalog or the server is wrong.")
          }
          hasher.update(bufferPointer: chunk)
          try FileIO.writeAll(fd, chunk, path: partial.path)
          progress(.bytes(chunk.count))
        }
      } catch let error as ResourceError where error.code == .integrity {
        discard()
        throw error
      } catch {
        // Kept only when the next install can resume it.
        if size == 0 || FileIO.kind(of: resumeFile) != .file { discard() }
        throw error
      }
      let digest = FileIO.hex(hasher.finalize())
      guard size == file.size, digest == file.sha256 else {
        discard()
        throw ResourceError(.integrity, "'\(file.path)' does not match the catalog (\(size == file.size ? "SHA-256 differs" : "\(size) of \(file.size) bytes")); nothing was installed. Try again; if it persists the publisher's blob is damaged.")
      }
      guard fsync(fd) == 0 else { throw FileIO.error("Cannot write '\(partial.path)'") }
      close(fd)
      closed = true
      guard rename(partial.path, blobURL(file.sha256).path) == 0 else { throw FileIO.error("Cannot install '\(file.path)'") }
      unlink(resumeFile.path)
      FileIO.syncDirectory(root.appending(path: "blobs"))
    }
  }

  /// Removes partial downloads nobody is writing (their blob lock is free)
  /// that cannot be resumed for `catalog`: blobs it no longer lists, blobs
  /// already installed, and downloads whose source gave no validator to
  /// resume with. The others are kept for the next install to resume.
  public func removeStalePartials(keeping catalog: Catalog) {
    let partial = root.appending(path: "partial")
    let listed = Set(catalog.tags.values.flatMap { $0.files.map(\.sha256) })
    // no partial folder: nothing to clean up
    let names = (dropping(.cleanup) { try FileManager.default.contentsOfDirectory(atPath: partial.path) }) ?? []
    for name in names {
      let blob = name.hasSuffix(".resume") ? String(name.dropLast(7)) : name
      let resumable = listed.contains(blob) && FileIO.kind(of: blobURL(blob)) != .file
        && names.contains(blob) && names.contains(blob + ".resume")
      if resumable { continue }
      // An installer holding the blob's lock is writing it: not stale. A lock
      // that cannot be opened leaves the file for the next clean-up.
      _ = dropping(.cleanup) { try FileLock(url: root.appending(path: "locks/\(blob)")).ifFree { unlink(partial.appending(path: name).path) } }
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
  /// A blobs folder that cannot be listed is an error, never "all good".
  public func verify() throws -> (checked: Int, damaged: [String]) {
    let blobs = root.appending(path: "blobs")
    var damaged: [String] = []
    let names: [String]
    if FileIO.kind(of: blobs) == .missing {
      names = []  // nothing installed yet
    } else {
      do { names = try FileManager.default.contentsOfDirectory(atPath: blobs.path).sorted() } catch {
        throw ResourceError(.unreadableState, "Cannot list the store's blobs in '\(blobs.path)' (\(error)); nothing was verified. Check the folder's owner and mode.")
      }
    }
    for name in names {
      let hash = dropping(.isTheAnswer) { try FileIO.sha256(of: blobs.appending(path: name)).sha256 }  // a blob that cannot be read counts as damaged
      if hash != name { damaged.append(name) }
    }
    return (names.count, damaged)
  }

  // MARK: Purging

  /// The store's record of last uses and run-time priorities.
  public var usage: TagUsage { TagUsage(file: root.appending(path: "usage.json"), lock: root.appending(path: "locks/usage"), now: now) }

  /// Each installed blob and its size.
  func blobSizes() -> [String: Int64] {
    let blobs = root.appending(path: "blobs")
    var sizes: [String: Int64] = [:]
    // no blobs folder: nothing installed
    for name in dropping(.isTheAnswer, { try FileManager.default.contentsOfDirectory(atPath: blobs.path) }) ?? [] {
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
    try await FileLock(url: root.appending(path: "locks/purge")).withExclusive {
      var plan = try PurgePlan.make(store: self, catalog: catalog, budget: budget, reserve: reserve, all: all, protecting: protecting)
      plan.dryRun = dryRun
      guard !dryRun else { return plan }
      for removal in plan.removals {
        for blob in removal.blobs {
          // Under the pins lock: a tag pinned since the plan was made keeps
          // its files, and a pin taken after this sees them gone and
          // downloads them again — never a pinned tag with missing files.
          // On a thread of its own and never waiting inside (see
          // PinLedger.change): a blob whose lock is held is being written or
          // checked, so in use, and stays.
          let (store, pins) = (self, pins)
          let wanted = catalog.tags.filter { $0.value.files.contains { $0.sha256 == blob } }.map(\.key)
          try await BlockingThread.run {
            Result {
              try FileLock(url: pins.lock).withExclusiveNow {
                guard Set(try pins.leases().map(\.tag)).isDisjoint(with: wanted) else { return }
                try FileLock(url: store.root.appending(path: "locks/\(blob)")).ifFree { _ = unlink(store.blobURL(blob).path) }
              }
            }
          }.get()
        }
      }
      return plan
    }
  }

  // MARK: Pins

  /// The store's pins, as leases held by processes.
  public var pins: PinLedger { PinLedger(file: root.appending(path: "pins.json"), lock: root.appending(path: "locks/pins"), now: now) }
}
