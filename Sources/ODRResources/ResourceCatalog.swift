public import FoundationEssentials
import Crypto
import ODRBase
public import ODRCatalog
public import ODRTrust
public import ODRTransports
package import ODRSigning
#if canImport(Glibc)
import Glibc
#endif

/// A catalog fetched from its location, validated, and accepted by the
/// bundle's local store: what ``ResourceRequest`` works against.
public struct ResourceCatalog: Sendable {
  /// The catalog's `catalog.json` URL; blobs resolve relative to it.
  public let location: URL
  public let catalog: Catalog
  public let store: LocalStore
  let transport: any BlobTransport
  /// The most bytes the store may hold (nil: no limit). Before a download
  /// that would go over it, unpinned tags are purged; a request that cannot
  /// fit even then fails with `.outOfSpace` and changes nothing.
  public var budget: Int64?
  /// Where this catalog's downloads wait for a slot (by loading priority).
  public var scheduler = DownloadScheduler.shared
  /// Things the user should know about how the catalog was accepted (trust
  /// on first use, an expired catalog served offline): one line each.
  public var notices: [String] = []

  /// The trust roots (`ed25519:…`) the catalog was admitted through; empty
  /// for an unsigned catalog. Keys imported from it carry them.
  public var trustRoots: [String] = []

  /// When the source last confirmed this catalog, for a catalog read from
  /// the copy kept on disk without asking the source (``loadKept(from:cacheHome:trust:)``);
  /// nil when it was just loaded from its source.
  public var checkedAt: Date?


  /// Loads the catalog at `location` (a folder made by `odr pack`, its
  /// `catalog.json`, or a URL to either that `transport` can read — for
  /// http(s) and s3 use ODRHTTP's transports), admits it under `trust`
  /// (signature, rollback, expiry: see `TrustPolicy`), and opens the
  /// bundle's store. A refused catalog changes nothing on disk.
  ///
  /// Offline first (docs/design.md, "Local store"): the last catalog accepted from `location`
  /// is kept with its validators and revalidated with a conditional
  /// request; on a 304 it is used as it is (its expiry checked again). When
  /// the source cannot be reached (a `.network` failure), the kept catalog
  /// is used, if it has not expired, with a one-line notice; downloads then
  /// fail only when they are really needed.
  public static func load(from location: URL, cacheHome: URL? = nil, transport: any BlobTransport = FileTransport(),
                          trust: TrustPolicy = TrustPolicy()) async throws -> ResourceCatalog {
    let catalogURL = try catalogLocation(location)
    let index = CatalogIndex(cacheHome: cacheHome)
    // Damaged state is the machine's problem, not the source's: said before
    // any request where it can be (and never taken for a bad mirror: its
    // code is not .integrity).
    try TrustLedger.checkReadable(for: catalogURL, stateHome: trust.stateHome)
    // A kept catalog that fails its check is not used (the fetch is then
    // unconditional); the reason is said only if the source is down too.
    let kept: KeptCatalog?
    do { kept = try keptCatalog(at: catalogURL, index: index, cacheHome: cacheHome, trust: trust) } catch let refusal as ResourceError where refusal.code != .unreadableState {
      kept = nil
    }
    while true {
      do {
        return try await loadOnce(catalogURL, kept: kept, index: index, cacheHome: cacheHome, transport: transport, trust: trust)
      } catch let error as ResourceError where error.code == .integrity || error.code == .invalidSource {
        // A stale, tampered or malformed copy: another mirror may serve the real one.
        guard await transport.reportDamaged(catalogURL) else { throw error }
      }
    }
  }

  private static func loadOnce(_ catalogURL: URL, kept: KeptCatalog?, index: CatalogIndex, cacheHome: URL?,
                               transport: any BlobTransport, trust: TrustPolicy) async throws -> ResourceCatalog {
    let fetched: FetchedDocument
    do {
      fetched = try await transport.document(at: catalogURL, limit: Catalog.maxBytes, unless: kept?.validators)
    } catch let error as ResourceError where error.code == .network {
      guard let kept = try keptCatalogRechecked(kept, at: catalogURL, index: index, cacheHome: cacheHome, trust: trust, after: error) else { throw error }
      try trust.refuseIfExpired(kept.catalog)
      var resources = ResourceCatalog(location: catalogURL, catalog: kept.catalog, store: kept.store, transport: transport)
      resources.trustRoots = kept.roots
      resources.notices.append("warning: \(error.message.prefix { $0 != ";" }); using the catalog of \(kept.catalog.bundle) kept on disk (version \(kept.catalog.version)). Tags on disk work; downloads need the source back.")
      return resources
    }
    guard case .fetched(let bytes, let validators) = fetched else {
      guard let kept else {
        throw ResourceError(.network, "\(catalogURL.redacted) answered \"not modified\" to a request that had nothing to revalidate. The server is misbehaving.")
      }
      try trust.refuseIfExpired(kept.catalog)
      kept.store.markCatalogChecked()
      var resources = ResourceCatalog(location: catalogURL, catalog: kept.catalog, store: kept.store, transport: transport)
      resources.trustRoots = kept.roots
      return resources
    }
    let signatureURL = catalogURL.deletingLastPathComponent().appending(path: catalogURL.lastPathComponent + ".sig")
    let signatureBytes = try await transport.dataIfPresent(at: signatureURL, limit: CatalogSignature.maxBytes)
    let (header, signedBy) = try verifiedHeader(bytes, signatureBytes, at: catalogURL)
    // Trust before decode: the tags are decoded only once the decision has
    // admitted the catalog, and kept together with the state it changed.
    var admitted: (catalog: Catalog, store: LocalStore)?
    let admission = try await TrustLedger(bundle: header.bundle, stateHome: trust.stateHome)
      .admit(header, signedBy: signedBy, location: catalogURL, policy: trust) {
        let catalog = try Catalog.decode(bytes)
        let store = try LocalStore(bundle: catalog.bundle, cacheHome: cacheHome, now: trust.now)
        try await store.accept(catalog, bytes: bytes, signature: signatureBytes)
        admitted = (catalog, store)
      }
    guard let (catalog, store) = admitted else { throw ResourceError(.integrity, "\(catalogURL.redacted): the catalog was not kept.") }
    store.markCatalogChecked()
    store.removeStalePartials(keeping: catalog)
    try await index.remember(catalogURL, .init(bundle: catalog.bundle, version: catalog.version, validators: validators.isEmpty ? nil : validators))
    var resources = ResourceCatalog(location: catalogURL, catalog: catalog, store: store, transport: transport)
    resources.notices = admission.notices
    resources.trustRoots = admission.roots
    return resources
  }

  /// The header of `catalog.json`'s bytes, with the keys whose signature
  /// lines verify them (nil: unsigned) — verify, then read: when there is a
  /// signature file, a line must verify the raw bytes before anything reads
  /// them (a changed byte is refused without the reader ever seeing it),
  /// and it must be a line of the catalog's own format
  /// (``CatalogSignature``). Only the header is read (bounded): the tags wait for the
  /// trust decision.
  package static func verifiedHeader(_ bytes: Data, _ signatureBytes: Data?, at catalogURL: URL) throws -> (header: CatalogHeader, signedBy: [VerifyingKey]?) {
    guard let signatureBytes else { return (try CatalogHeader.read(bytes), nil) }
    let signature: CatalogSignature
    do { signature = try CatalogSignature(parsing: signatureBytes) } catch let error as TrustError {
      throw ResourceError(.integrity, "catalog.json.sig at \(catalogURL.redacted): \(error.message) Nothing was changed here.")
    }
    // Each line is checked once, over the raw bytes (Ed25519 hashes the
    // whole catalog: this is the signature's whole cost), in the forms it
    // may take; the header's format then says which form counts.
    let lines = signature.verifiedLines(of: bytes)
    guard !lines.isEmpty else {
      throw ResourceError(.integrity, "catalog.json at \(catalogURL.redacted) does not match its signature: it was changed after signing. Nothing was changed here.")
    }
    let header = try CatalogHeader.read(bytes)
    let form = CatalogSignature.form(ofFormat: header.formatVersion)
    let signedBy = lines.filter { $0.format == form }.map(\.key)
    guard !signedBy.isEmpty else {
      throw ResourceError(.integrity, "catalog.json at \(catalogURL.redacted) is signed in the form of another catalog format than its own (\(header.formatVersion)); refusing it. Nothing was changed here.")
    }
    return (header, signedBy)
  }

  /// The catalog last accepted from `location`, from the local store,
  /// without any request: for commands answered from disk (`odr end`,
  /// `odr path`, `odr status`) and for `--offline`. It is checked again
  /// against `trust` (the current pins and trust state) before it is used.
  /// Its transport refuses every download, so a tag not on disk fails with
  /// a `.network` error that says so. Throws `.notFound` when no catalog
  /// from `location` is kept on this machine.
  public static func loadKept(from location: URL, cacheHome: URL? = nil, trust: TrustPolicy = TrustPolicy()) throws -> ResourceCatalog {
    let catalogURL = try catalogLocation(location)
    let kept = try keptCatalog(at: catalogURL, index: CatalogIndex(cacheHome: cacheHome), cacheHome: cacheHome, trust: trust)
    var resources = ResourceCatalog(location: catalogURL, catalog: kept.catalog, store: kept.store, transport: OfflineTransport())
    resources.trustRoots = kept.roots
    resources.checkedAt = kept.store.catalogCheckedAt
    if let expires = kept.catalog.expires, expires < trust.now() {
      resources.notices.append("warning: the catalog of \(kept.catalog.bundle) (version \(kept.catalog.version)) expired on \(expires.formatted(.iso8601)); serving what is on disk. Online, it will be refused until the publisher re-signs it.")
    }
    return resources
  }

  /// `loadKept`, for `--offline`: the same, with errors that name the flag.
  public static func loadOffline(from location: URL, cacheHome: URL? = nil, trust: TrustPolicy = TrustPolicy()) throws -> ResourceCatalog {
    do { return try loadKept(from: location, cacheHome: cacheHome, trust: trust) } catch let error as ResourceError where error.code == .notFound {
      throw ResourceError(.network, "Offline: \(error.message)")
    }
  }

  /// `catalog.json` of `location`, refusing credentials in the URL.
  private static func catalogLocation(_ location: URL) throws -> URL {
    let catalogURL = location.pathExtension == "json" ? location : location.appending(path: "catalog.json")
    guard catalogURL.user == nil && catalogURL.password == nil else {
      throw ResourceError(.invalidSource, "The catalog URL carries a user name or password; odr never takes credentials from a URL (they would reach logs and odr's files). Remove them.")
    }
    return catalogURL
  }

  /// A catalog kept on disk, checked, with its store and the validators to
  /// revalidate it with.
  struct KeptCatalog {
    let catalog: Catalog
    let store: LocalStore
    /// nil when the store's catalog is not the one they were sent with
    /// (another location of the bundle moved it on).
    let validators: CacheValidators?
    /// The trust roots it is trusted through.
    let roots: [String]
  }

  /// The catalog kept for `catalogURL`, checked again (signature, pins,
  /// trust state, the location's bundle) exactly as its bytes were
  /// accepted: a kept catalog is never a trust anchor of its own.
  private static func keptCatalog(at catalogURL: URL, index: CatalogIndex, cacheHome: URL?, trust: TrustPolicy) throws -> KeptCatalog {
    guard let entry = try index.entry(for: catalogURL) else {
      throw ResourceError(.notFound, "the catalog at \(catalogURL.redacted) has never been loaded on this machine. Run once without --offline.")
    }
    let store = try LocalStore(bundle: entry.bundle, cacheHome: cacheHome, now: trust.now)
    guard let (bytes, signatureBytes) = try store.keptCatalogBytes() else {
      throw ResourceError(.notFound, "no catalog of \(entry.bundle) is stored in \(store.root.path). Run once without --offline.")
    }
    let (header, signedBy) = try verifiedHeader(bytes, signatureBytes, at: store.root.appending(path: "catalog.json"))
    guard header.bundle == entry.bundle else {
      throw ResourceError(.integrity, "The catalog kept in \(store.root.path) claims \(header.bundle), not \(entry.bundle); refusing it. Load the catalog online again.")
    }
    let roots = try TrustLedger(bundle: header.bundle, stateHome: trust.stateHome).recheck(header, signedBy: signedBy, location: catalogURL, policy: trust)
    let catalog = try Catalog.decode(bytes)
    return KeptCatalog(catalog: catalog, store: store, validators: entry.version == catalog.version ? entry.validators : nil, roots: roots)
  }

  /// The kept catalog to fall back on when the source failed with `error`:
  /// the one checked before the request, else (none was usable) the reason
  /// it cannot be used, said beside the network failure.
  private static func keptCatalogRechecked(_ kept: KeptCatalog?, at catalogURL: URL, index: CatalogIndex, cacheHome: URL?,
                                           trust: TrustPolicy, after error: ResourceError) throws -> KeptCatalog? {
    if let kept { return kept }
    do { return try keptCatalog(at: catalogURL, index: index, cacheHome: cacheHome, trust: trust) } catch let refusal as ResourceError where refusal.code == .integrity {
      throw ResourceError(.integrity, "\(error.message.prefix { $0 != ";" }), and the catalog kept on disk cannot be used: \(refusal.message)")
    } catch let refusal as ResourceError where refusal.code == .notFound {
      return nil
    }
  }

  /// The tag named `name`, or the not-found error (Apple's 4994).
  public func tag(_ name: String) throws -> Catalog.Tag {
    guard let tag = catalog.tags[name] else {
      let known = catalog.tags.keys.sorted()
      let guess = NameSuggestion.closest(to: name, among: known).map { " Did you mean '\($0)'?" } ?? ""
      throw ResourceError(.notFound, "No tag '\(name)' in the catalog of \(catalog.bundle) (tags: \(known.joined(separator: ", "))).\(guess)")
    }
    return tag
  }

  /// Sets the preservation priority of `tags` (0…1, lower is purged first),
  /// overriding the catalog's, persisted in the store (Apple's
  /// `setPreservationPriority(_:forTags:)`).
  public func setPreservationPriority(_ priority: Double, forTags tags: Set<String>) async throws {
    for name in tags { _ = try tag(name) }
    try await store.usage.setPriority(priority, for: tags.sorted())
  }

  /// Where a blob is published: `blobs/<sha256>` beside `catalog.json`.
  func blobLocation(_ sha256: String) -> URL {
    location.deletingLastPathComponent().appending(path: "blobs").appending(path: sha256)
  }

  /// Installs every missing file of `tags`, each blob once, reporting
  /// (bytes done, bytes to download) as they arrive.
  /// `ticket`: the request's id and its loading priority, read as each file
  /// queues (a priority changed mid-request counts for its later files).
  func install(_ tags: [Catalog.Tag], ticket: (id: UUID, priority: @Sendable () -> Double) = (UUID(), { 0.5 }),
               progress: (@Sendable (ResourceRequest.LoadProgress) -> Void)?) async throws {
    var seen = Set<String>()
    let missing = tags.flatMap(\.files).filter { seen.insert($0.sha256).inserted && !store.contains($0) }
    if transport is OfflineTransport, !missing.isEmpty {
      let names = catalog.tags.filter { tags.contains($0.value) && $0.value.files.contains { missing.contains($0) } }.keys.sorted()
      throw ResourceError(.network, "Offline: \(names.joined(separator: ", ")) \(names.count == 1 ? "is" : "are") not on disk, and --offline forbids downloading. Run without --offline to fetch \(names.count == 1 ? "it" : "them").")
    }
    let total = missing.reduce(Int64(0)) { $0 + $1.size }
    if let budget, total > 0, store.size + total > budget {
      let requested = Set(catalog.tags.filter { tags.contains($0.value) }.keys)
      let plan = try PurgePlan.make(store: store, catalog: catalog, budget: budget, reserve: total, all: false, protecting: requested)
      guard plan.sizeAfter + total <= budget else {
        let pinned = plan.kept.filter { $0.reason.hasPrefix("pinned") }.map(\.tag)
        throw ResourceError(.outOfSpace, "\(requested.sorted().joined(separator: ", ")) need\(requested.count == 1 ? "s" : "") \(ByteSize.format(total)) more, and the store's budget is \(ByteSize.format(budget)): even after purging every unpinned tag it would hold \(ByteSize.format(plan.sizeAfter + total)). Nothing was changed. Raise --max-size\(pinned.isEmpty ? "" : ", or end access to \(pinned.joined(separator: ", "))").")
      }
      _ = try await store.purge(catalog: catalog, budget: budget, all: false, dryRun: false, reserve: total, protecting: requested)
    }
    var (done, resumed): (Int64, Int64) = (0, 0)
    progress?(.init(bytesCompleted: 0, bytesTotal: total, filesCompleted: 0, filesTotal: missing.count))
    for (index, file) in missing.enumerated() {
      try Task.checkCancellation()
      try await scheduler.withSlot(id: ticket.id, priority: ticket.priority()) {
        // What this file added to the counts, taken back if it starts over.
        var (fileDone, fileResumed): (Int64, Int64) = (0, 0)
        try await installTryingSources(file) { step in
          var event: ResourceRequest.LoadProgress.Event?
          switch step {
          case .bytes(let count):
            (done, fileDone) = (done + Int64(count), fileDone + Int64(count))
          case .resumed(let offset):
            (done, fileDone) = (done + offset, fileDone + offset)
            (resumed, fileResumed) = (resumed + offset, fileResumed + offset)
            event = .resumed(path: file.path, offset: offset, size: file.size)
          case .restarted(let discarded):
            (done, resumed) = (done - fileDone, resumed - fileResumed)
            (fileDone, fileResumed) = (0, 0)
            event = .restarted(path: file.path, discarded: discarded)
          }
          progress?(.init(bytesCompleted: done, bytesTotal: total, filesCompleted: index, filesTotal: missing.count,
                          bytesResumed: resumed, event: event))
        }
      }
      progress?(.init(bytesCompleted: done, bytesTotal: total, filesCompleted: index + 1, filesTotal: missing.count, bytesResumed: resumed))
    }
  }

  /// Installs `file`; when its bytes do not match the catalog and the
  /// transport has another source (a mirror), tries that one.
  private func installTryingSources(_ file: Catalog.File, progress: (LocalStore.InstallEvent) -> Void) async throws {
    let source = blobLocation(file.sha256)
    while true {
      do {
        return try await store.install(file, from: source, transport: transport, progress: progress)
      } catch let error as ResourceError where error.code == .integrity {
        guard await transport.reportDamaged(source) else { throw error }
      }
    }
  }

  /// The bytes of `file` read straight from the catalog into memory and
  /// checked against its size and SHA-256, without touching the local
  /// store: for secrets that must never reach the disk (`odr exec --fetch`).
  /// Files larger than `limit` bytes are refused.
  public func verifiedData(of file: Catalog.File, limit: Int64 = 16 << 20) async throws -> Data {
    guard file.size <= limit else {
      throw ResourceError(.invalidSource, "'\(file.path)' is \(file.size) bytes; files read into memory may be at most \(limit) bytes.")
    }
    var data = Data(capacity: Int(file.size))
    var hasher = SHA256()
    try await transport.stream(blobLocation(file.sha256)) { chunk in
      guard data.count + chunk.count <= Int(file.size) else {
        throw ResourceError(.integrity, "'\(file.path)' is larger than the catalog says (\(file.size) bytes). The catalog or the server is wrong.")
      }
      hasher.update(bufferPointer: chunk)
      data.append(contentsOf: chunk)
    }
    guard data.count == Int(file.size), FileIO.hex(hasher.finalize()) == file.sha256 else {
      throw ResourceError(.integrity, "'\(file.path)' does not match the catalog (\(data.count == Int(file.size) ? "SHA-256 differs" : "\(data.count) of \(file.size) bytes")). Try again; if it persists the publisher's blob is damaged.")
    }
    return data
  }

  /// The published bytes of each file of the secrets tag `tag`, checked
  /// against the catalog's size and SHA-256 on every read. The ciphertext of
  /// an encrypted tag is kept in the store (downloaded when missing, so it
  /// also serves `--offline`); a plaintext secrets tag is read into memory
  /// only and never stored. Decrypting is the caller's business.
  public func secretData(of tag: Catalog.Tag) async throws -> [(file: Catalog.File, data: Data)] {
    var result: [(file: Catalog.File, data: Data)] = []
    for file in tag.files {
      guard tag.encryption != nil else {
        result.append((file, try await verifiedData(of: file)))
        continue
      }
      if let data = storedData(of: file) {
        result.append((file, data))
        continue
      }
      // Missing, purged meanwhile, or damaged on disk: fetch it again once.
      unlink(store.blobURL(file.sha256).path)
      try await install([Catalog.Tag(category: tag.category, secrets: true, files: [file])], progress: nil)
      guard let data = storedData(of: file) else {
        throw ResourceError(.integrity, "'\(file.path)' in the store does not match the catalog even after downloading it again. Check the disk; `odr status --verify` checks every blob.")
      }
      result.append((file, data))
    }
    return result
  }

  /// A stored blob's bytes when their size and SHA-256 are the catalog's.
  private func storedData(of file: Catalog.File) -> Data? {
    // not stored or damaged: read from the source instead
    guard store.contains(file), let data = dropping(.isTheAnswer, { try Data(contentsOf: store.blobURL(file.sha256)) }),
          FileIO.hex(SHA256.hash(data: data)) == file.sha256 else { return nil }
    return data
  }

  /// The tags `odr prefetch` fetches, in the order it starts them: every
  /// `initial` tag, then the `prefetch` tags by their `order` (as the App
  /// Store does after an install); ties by name.
  public var prefetchOrder: [String] {
    let initial = catalog.tags.filter { $0.value.category == .initial }.sorted { ($0.value.order, $0.key) < ($1.value.order, $1.key) }
    let prefetch = catalog.tags.filter { $0.value.category == .prefetch }.sorted { ($0.value.order, $0.key) < ($1.value.order, $1.key) }
    return (initial + prefetch).map(\.key)
  }

  /// Downloads `tags` (default ``prefetchOrder``), at most `parallel` at a
  /// time, started in order. One failure does not stop the others; the
  /// report says what happened to each. Nothing is pinned: prefetched tags
  /// may be purged like any unpinned tag.
  public func prefetch(_ tags: [String]? = nil, parallel: Int = 6) async -> PrefetchReport {
    let names = tags ?? prefetchOrder
    // Its own slots: `parallel` is the bound, not the shared scheduler's width.
    var copy = self
    copy.scheduler = DownloadScheduler(width: parallel)
    let bounded = copy
    var entries = [PrefetchReport.Entry?](repeating: nil, count: names.count)
    await withTaskGroup(of: (Int, PrefetchReport.Entry).self) { group in
      var next = 0
      func start() {
        guard next < names.count else { return }
        let (index, name) = (next, names[next])
        next += 1
        group.addTask { (index, await bounded.prefetchOne(name)) }
      }
      for _ in 0..<max(1, parallel) { start() }
      for await (index, entry) in group {
        entries[index] = entry
        start()
      }
    }
    return PrefetchReport(entries: entries.compactMap { $0 })
  }

  private func prefetchOne(_ name: String) async -> PrefetchReport.Entry {
    guard let tag = catalog.tags[name] else {
      return .init(tag: name, category: "", outcome: .failed, bytes: 0, error: "No tag '\(name)' in the catalog.", code: .notFound)
    }
    if tag.secrets && tag.encryption == nil {
      return .init(tag: name, category: tag.category.rawValue, outcome: .skipped, bytes: tag.size,
                   error: "a plaintext secrets tag is never cached; KeyImporter (odr fetch) imports it", code: nil)
    }
    if isInstalled([tag]) {
      return .init(tag: name, category: tag.category.rawValue, outcome: .alreadyOnDisk, bytes: tag.size, error: nil, code: nil)
    }
    do {
      try await install([tag], progress: nil)
      return .init(tag: name, category: tag.category.rawValue, outcome: .downloaded, bytes: tag.size, error: nil, code: nil)
    } catch let error as ResourceError {
      return .init(tag: name, category: tag.category.rawValue, outcome: .failed, bytes: tag.size, error: error.message, code: error.code)
    } catch {
      return .init(tag: name, category: tag.category.rawValue, outcome: .failed, bytes: tag.size, error: "\(error)", code: nil)
    }
  }

  /// True when every file of `tags` is on disk with the right size.
  func isInstalled(_ tags: [Catalog.Tag]) -> Bool {
    tags.allSatisfy { $0.files.allSatisfy(store.contains) }
  }
}
