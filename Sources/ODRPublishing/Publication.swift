public import FoundationEssentials
import ODRBase
import ODRCatalog
import ODRTransports
import ODRSigning
import ODRTrust

/// `odr publish DIR DEST` (docs/hosting.md): copies a folder made by `odr pack`
/// to a destination in an order that never shows a reader a catalog whose
/// blobs are missing, or a catalog its signature file does not cover.
///
/// 1. every blob not already there (same size: blobs are named by their
///    SHA-256), `Cache-Control: public, max-age=31536000, immutable`;
/// 2. `catalog.json.sig` holding the new signatures *and* those of the
///    catalog still published (the lines that verify its bytes), so the
///    old catalog stays valid meanwhile;
/// 3. `catalog.json`, `Cache-Control: no-cache`.
///
/// The bridge stays until the next publish replaces it: a client that read
/// the old `catalog.json` just before step 3 and the signature file after
/// it still finds a line that verifies what it read. (The old lines verify
/// only the old bytes, so they admit nothing new.)
///
/// Interrupted at any point, the destination serves the previous catalog
/// (with its blobs and a signature that covers it) or the new one.
public struct Publication: Sendable {
  /// One thing publishing does.
  public struct Step: Sendable, Encodable, Equatable {
    public enum Action: String, Sendable, Encodable { case upload, skip, delete }
    public let path: String
    public let action: Action
    public let bytes: Int64
  }

  public static let blobCacheControl = "public, max-age=31536000, immutable"
  public static let catalogCacheControl = "no-cache"

  public let folder: URL
  public let destination: any PublishDestination
  /// The steps, in order.
  public let steps: [Step]
  private let catalogBytes: Data
  private let signature: CatalogSignature?
  private let publishedSignature: CatalogSignature?
  private let blobs: [(sha256: String, size: Int64)]

  /// Reads `folder` (refusing one whose blobs are missing or of the wrong
  /// size) and asks `destination` what it already has. A signed catalog
  /// that clients of the one published could not follow — signed by a key
  /// the published catalog's signers do not lead to, or dropping its
  /// hand-over chain — is refused unless `newTrustRoot`. With `prune`, the
  /// blobs at the destination that neither this catalog nor the published
  /// one (still served to clients mid-switch) names are deleted after the
  /// switch (`delete` steps, last).
  public init(folder: URL, destination: any PublishDestination, newTrustRoot: Bool = false, prune: Bool = false) async throws {
    self.folder = folder
    self.destination = destination
    guard FileIO.kind(of: folder.appending(path: "catalog.json")) == .file else {
      throw ResourceError(.notFound, "No catalog.json in '\(folder.path)'. odr publish uploads a folder made by `odr pack` (odr pack SOURCE --output \(folder.lastPathComponent)).")
    }
    catalogBytes = try FileTransport().dataSync(at: folder.appending(path: "catalog.json"), limit: Catalog.maxBytes)
    let catalog = try Catalog.decode(catalogBytes)
    let signatureFile = folder.appending(path: "catalog.json.sig")
    let publishedCatalog = try await destination.read("catalog.json", limit: Catalog.maxBytes)
    do {
      signature = FileIO.kind(of: signatureFile) == .file
        ? try CatalogSignature(parsing: try FileTransport().dataSync(at: signatureFile, limit: CatalogSignature.maxBytes)) : nil
      // A published signature file that does not parse is replaced, not bridged.
      let published = await droppingAsync(.isTheAnswer) { try await destination.read("catalog.json.sig", limit: CatalogSignature.maxBytes).map(CatalogSignature.init(parsing:)) }
      publishedSignature = published.flatMap { signature in
        var bridged = signature
        bridged.entries = publishedCatalog.map(signature.lines(verifying:)) ?? []
        return bridged
      }
    } catch let error as TrustError {
      throw ResourceError(.integrity, "catalog.json.sig: \(error.message)")
    }
    // The client's rule: a line in the form of the catalog's own format.
    let signedBy = signature?.signers(of: catalogBytes, format: catalog.formatVersion) ?? []
    if signature != nil, signedBy.isEmpty {
      throw ResourceError(.integrity, "\(signatureFile.path) holds no signature of catalog.json beside it in the form of its format (\(catalog.formatVersion)), so every client would refuse it; run `odr pack` again. Nothing was uploaded.")
    }
    // a published catalog that does not read is being repaired: nothing to compare
    if let publishedCatalog, let published = dropping(.isTheAnswer, { try CatalogHeader.read(publishedCatalog) }) {
      try Self.refuseRollback(catalog, bytes: catalogBytes, replacing: published, at: destination.name)
    }
    // A signed catalog is published over it: clients must be able to follow.
    // (A published catalog that does not decode is being repaired: no check.)
    if signature != nil, !newTrustRoot, let publishedCatalog, let publishedSignature,
       // a published catalog that does not decode is being repaired: no chain to check
       let published = dropping(.isTheAnswer, { try Catalog.decode(publishedCatalog) }), published.bundle == catalog.bundle,
       case let publishedSigners = publishedSignature.signers(of: publishedCatalog, format: published.formatVersion), !publishedSigners.isEmpty {
      try Self.refuseBrokenChain(catalogBytes, signedBy: signedBy, replacing: published, bytes: publishedCatalog, signedBy: publishedSigners,
                                 at: destination.name)
    }
    var seen = Set<String>()
    var blobs: [(sha256: String, size: Int64)] = []
    for file in catalog.tags.values.flatMap(\.files).sorted(by: { $0.sha256 < $1.sha256 }) where seen.insert(file.sha256).inserted {
      guard FileIO.size(of: folder.appending(path: "blobs/\(file.sha256)")) == file.size else {
        throw ResourceError(.notFound, "\(folder.path)/blobs/\(file.sha256) (\(file.path)) is missing or not \(file.size) bytes; run `odr pack` again. Nothing was uploaded.")
      }
      blobs.append((file.sha256, file.size))
    }
    self.blobs = blobs
    var steps: [Step] = []
    for blob in blobs {
      let there = try await destination.size(of: "blobs/\(blob.sha256)") == blob.size
      steps.append(Step(path: "blobs/\(blob.sha256)", action: there ? .skip : .upload, bytes: blob.size))
    }
    if let signature { steps.append(Step(path: "catalog.json.sig", action: .upload, bytes: Int64(signature.encoded.count))) }
    steps.append(Step(path: "catalog.json", action: .upload, bytes: Int64(catalogBytes.count)))
    if signature == nil && publishedSignature != nil { steps.append(Step(path: "catalog.json.sig", action: .delete, bytes: 0)) }
    if prune {
      var kept = Set(blobs.map(\.sha256))
      if let publishedCatalog {
        guard let published = dropping(.isTheAnswer, { try Catalog.decode(publishedCatalog) }) else {
          throw ResourceError(.integrity, "The catalog published at \(destination.name) cannot be read, so odr cannot tell which blobs its clients still need: nothing was published. Publish without --prune first (it repairs the catalog), then prune.")
        }
        kept.formUnion(published.tags.values.flatMap(\.files).map(\.sha256))
      }
      for name in try await destination.blobs() where !kept.contains(name) {
        steps.append(Step(path: "blobs/\(name)", action: .delete, bytes: try await destination.size(of: "blobs/\(name)") ?? 0))
      }
    }
    self.steps = steps
  }

  /// The blobs `--prune` deletes after the switch.
  public var pruned: [Step] { steps.filter { $0.action == .delete && $0.path.hasPrefix("blobs/") } }

  /// Throws unless a client that trusts `published` (its signers, its chain)
  /// can follow to `catalog`: its signer must be reachable from the
  /// published signers through its chain, and its chain must extend the
  /// published one (a build that packed into an empty folder drops it).
  /// Refuses to publish over a catalog of another bundle, a version lower
  /// than the published one, or the published version with other content
  /// than its expiry (clients that saw it refuse all three).
  static func refuseRollback(_ catalog: Catalog, bytes: Data, replacing published: CatalogHeader, at destination: String) throws {
    guard published.bundle == catalog.bundle else {
      throw ResourceError(.integrity, "\(destination) holds the catalog of \(published.bundle), not \(catalog.bundle); publishing over it would switch the bundle its clients read. Nothing was uploaded. Publish to another destination, or remove that catalog first.")
    }
    if catalog.version < published.version {
      throw ResourceError(.integrity, "version \(catalog.version) is lower than version \(published.version) published at \(destination): every client that saw \(published.version) would refuse it, and clients that keep no state would take the older keys. Nothing was uploaded. Pack again with --catalog-version \(published.version + 1).")
    }
    // (this catalog was decoded already: its header reads)
    if catalog.version == published.version, let mine = dropping(.isTheAnswer, { try CatalogHeader.read(bytes) }), mine.digest != published.digest {
      throw ResourceError(.integrity, "version \(catalog.version) is already published at \(destination) with other content; clients that saw it refuse a different catalog of the same version (only a re-signed expiry may differ). Nothing was uploaded. Pack again with --catalog-version \(published.version + 1).")
    }
  }

  static func refuseBrokenChain(_ bytes: Data, signedBy: [VerifyingKey], replacing published: Catalog, bytes publishedBytes: Data,
                                signedBy publishedSigners: [VerifyingKey], at destination: String) throws {
    let header = try CatalogHeader.read(bytes)
    let old = published.handovers ?? [], new = header.handovers ?? []
    guard new.count >= old.count, Array(new.prefix(old.count)) == old else {
      throw ResourceError(.integrity, "This catalog does not carry the hand-over chain of the one published (version \(published.version)), so clients that pin an earlier key would refuse it. Nothing was uploaded. Pack with --previous <the published folder> so the chain is carried, or publish with --new-trust-root if you started over on purpose.")
    }
    // The client's own decision, as a client that accepted the published
    // catalog makes it: one rule of which signer a chain reaches.
    let digest = try CatalogHeader.read(publishedBytes).digest
    var state = TrustLedger.State(signed: true)
    for signer in publishedSigners {
      state.roots[signer.description] = .init(firstUse: false, version: published.version, signers: published.signers ?? [signer], signer: signer,
                                              digest: digest)
    }
    do {
      _ = try TrustDecision(header: header, signedBy: signedBy, location: destination, now: nil, allowsFirstUse: false, state: state).decide()
    } catch let error as ResourceError {
      throw ResourceError(.integrity, "Clients that accepted the catalog published at \(destination) (version \(published.version), whose signers are \((published.signers ?? []).map(\.shortDescription).joined(separator: ", "))) would refuse this one: \(error.message) Nothing was uploaded. Sign with one of those keys (or one they hand over to), or publish with --new-trust-root if you started over on purpose (clients must then pin the new key).")
    }
  }


  /// True when the catalog being published is unsigned and replaces a
  /// signed one: clients that trusted the signature will refuse it.
  public var dropsSignature: Bool { signature == nil && publishedSignature != nil }

  /// Carries the steps out; `progress` hears each one as it starts.
  public func run(progress: (Step) -> Void = { _ in }) async throws {
    for step in steps where step.path.hasPrefix("blobs/") && step.action == .upload {
      progress(step)
      let sha256 = String(step.path.dropFirst(6))
      try await destination.upload(folder.appending(path: step.path), sha256: sha256, to: step.path, cacheControl: Self.blobCacheControl)
    }
    if let signature {
      progress(Step(path: "catalog.json.sig", action: .upload, bytes: Int64(signature.encoded.count)))
      var both = signature
      both.entries += publishedSignature?.entries.filter { old in !signature.entries.contains { $0.signature == old.signature } } ?? []
      let bridge = both.overBound == nil ? both : signature
      try await destination.upload(bridge.encoded, to: "catalog.json.sig", cacheControl: Self.catalogCacheControl)
    }
    progress(Step(path: "catalog.json", action: .upload, bytes: Int64(catalogBytes.count)))
    try await destination.upload(catalogBytes, to: "catalog.json", cacheControl: Self.catalogCacheControl)
    if signature == nil, publishedSignature != nil {
      progress(Step(path: "catalog.json.sig", action: .delete, bytes: 0))
      try await destination.delete("catalog.json.sig")
    }
    for step in pruned {
      progress(step)
      try await destination.delete(step.path)
    }
  }
}
