public import FoundationEssentials
import ODRBase
import Crypto
public import ODRCatalog
import ODRSigning
public import ODRAge
#if canImport(Glibc)
import Glibc
#endif

/// `odr pack`: turns a publisher folder into a static catalog folder
/// (docs/design.md, "The published catalog"): `catalog.json` plus content-addressed `blobs/<sha256>`.
///
/// Packing the same folder twice gives byte-identical output. A bad folder
/// (missing file, unknown category, invalid or colliding tag names, a path
/// leaving the folder, a symlink) is refused before anything is written.
public struct Publisher: Sendable {
  /// The publisher folder, holding `tags.json`.
  public let source: URL

  public init(source: URL) {
    self.source = source
  }

  /// Reads the folder, hashes every tagged file, encrypts the files of
  /// secrets tags to their recipients, and writes the catalog to `output`:
  /// blobs first, then `catalog.json.sig` (when signing), `catalog.json`
  /// last. `version` overrides the one in `tags.json` (default 1). Every
  /// check (documents, recipients, keys) runs before anything is written.
  @discardableResult
  public func pack(to output: URL, version: Int? = nil, options: PackOptions = PackOptions()) async throws -> Catalog {
    let manifest = try readManifest(bundle: options.bundle)
    var catalog = try makeCatalog(manifest, version: version)
    warnOfKeysInPlainTags(catalog, options: options)
    let sealed = try await seal(&catalog, manifest: manifest, options: options)
    let replaced = try options.previous ?? PreviousCatalog.folder(output, required: false)
    let previous = try decode(replaced, needed: !options.signingKeys.isEmpty)
    if let previous = previous?.catalog, previous.bundle == catalog.bundle, catalog.version < previous.version {
      throw ResourceError(.integrity, "version \(catalog.version) is lower than the previous catalog's \(previous.version) (in \(replaced.origin)): every client that saw \(previous.version) would refuse it, and clients that keep no state would take the older keys. Nothing was written. Use --catalog-version \(previous.version + 1) (or \"version\" in tags.json).")
    }
    let keys = options.signingKeys
    if !keys.isEmpty {
      catalog.formatVersion = CatalogSignature.format(signedBy: keys)
      catalog.expires = options.expires ?? Date().addingTimeInterval(Double(PackOptions.defaultValidity.components.seconds))
      catalog.signers = options.nextSigners.isEmpty ? keys.map(\.verifyingKey) : options.nextSigners
      try refuseWhatClientsRefuse(catalog, signedWith: keys, previous: previous, options: options)
      catalog.handovers = try handovers(for: catalog, signedWith: keys, previous: previous, options: options)
    } else {
      catalog.expires = options.expires
    }
    try catalog.validate()
    let blobs = output.appending(path: "blobs")
    try FileIO.makeDirectory(blobs)
    var written = Set<String>()
    for tag in catalog.tags.values {
      for file in tag.files where written.insert(file.sha256).inserted {
        let blob = blobs.appending(path: file.sha256)
        if FileIO.size(of: blob) == file.size { continue }  // content-addressed: already there
        if let ciphertext = sealed[file.sha256] {
          try FileIO.atomicWrite(ciphertext, to: blob)
        } else {
          try FileIO.atomicCopy(from: source.appending(path: file.path), to: blob)
        }
      }
    }
    let bytes = catalog.encoded()
    let signatureFile = output.appending(path: "catalog.json.sig")
    if !keys.isEmpty {
      try FileIO.atomicWrite(try CatalogSignature(signing: bytes, with: keys, format: catalog.formatVersion).encoded, to: signatureFile)
    } else if FileIO.kind(of: signatureFile) == .file {
      unlink(signatureFile.path)
      options.notify("removed the old catalog.json.sig: this catalog is unsigned, and clients that saw a signed one will refuse it.")
    }
    try FileIO.atomicWriteChangingValidator(bytes, to: output.appending(path: "catalog.json"))
    adviseOnRecipients(catalog, previous: previous?.catalog, options: options)
    return catalog
  }

  /// The catalog this pack replaces, and whether it was signed; nil when
  /// there is none. When signing it is `needed` (its chain is carried
  /// forward), so an unreadable one stops the pack; otherwise it only
  /// serves advice and is skipped.
  private func decode(_ previous: PreviousCatalog, needed: Bool) throws -> (catalog: Catalog, signed: Bool)? {
    guard let bytes = previous.bytes else { return nil }
    do {
      return (try Catalog.decode(bytes), previous.signed)
    } catch {
      guard needed else { return nil }
      throw ResourceError(.invalidSource, "The catalog in \(previous.origin) (the one this pack replaces) cannot be read, so its signer hand-over chain cannot be carried forward: \(error). Nothing was written. Restore it, or pack into an empty folder with --new-trust-root.")
    }
  }

  /// Refuses, before anything is written, a signed catalog every client
  /// would refuse: a signature file over the bounds clients read, Ed25519
  /// signatures alone after a post-quantum catalog (clients that accepted
  /// it admit hybrid signers only), and a post-quantum catalog whose next
  /// signers are all Ed25519 (its next version could only be refused).
  private func refuseWhatClientsRefuse(_ catalog: Catalog, signedWith keys: [SigningKey], previous: (catalog: Catalog, signed: Bool)?,
                                       options: PackOptions) throws {
    if let over = CatalogSignature.overBound(signedBy: keys.map(\.verifyingKey)) {
      throw ResourceError(.invalidSource, "Signing with \(keys.count) keys makes catalog.json.sig \(over), so every client would refuse it. Nothing was written. Sign with fewer keys.")
    }
    let postQuantum = keys.contains(where: \.isPostQuantum)
    if let previous, previous.signed, previous.catalog.bundle == catalog.bundle,
       previous.catalog.formatVersion >= CatalogSignature.postQuantumFormat, !postQuantum {
      guard options.newTrustRoot else {
        throw ResourceError(.integrity, "The previous catalog (version \(previous.catalog.version)) is signed post-quantum, and clients that accepted it admit post-quantum signatures only; this one would be signed by Ed25519 keys alone, which they refuse. Nothing was written. Sign with the post-quantum key too (--sign NAME), or start over with --new-trust-root (every client must then run `odr trust reset \(catalog.bundle)`).")
      }
      options.notify("warning: the previous catalog is signed post-quantum; clients that accepted it refuse this Ed25519-signed one until they run `odr trust reset \(catalog.bundle)` and pin the new key.")
    }
    if postQuantum, !(catalog.signers ?? []).contains(where: \.isPostQuantum) {
      throw ResourceError(.integrity, "This catalog is signed post-quantum, but its next signers (--next-signer, default the signing keys) are all Ed25519 keys: clients that accept it admit post-quantum signatures only from then on, so they would refuse every next version. Nothing was written. Name a post-quantum key among the next signers (odr signing-key new NAME --post-quantum).")
    }
  }

  /// The hand-over chain of a catalog signed with `keys`: the previous
  /// catalog's, carried forward, plus a statement when the signers of the
  /// next versions differ from the set in effect, made by one of `keys`
  /// the previous signers include (an Ed25519 one when the next signers
  /// include Ed25519 keys). Refuses keys none of which the
  /// previous signed catalog's signers include, unless `newTrustRoot`
  /// (which starts an empty chain: clients must re-pin), and a statement by
  /// a hybrid key naming an Ed25519-only one (every client refuses it).
  private func handovers(for catalog: Catalog, signedWith keys: [SigningKey], previous: (catalog: Catalog, signed: Bool)?,
                         options: PackOptions) throws -> [Handover]? {
    var chain: [Handover] = []
    var makers = keys
    let names = keys.map(\.verifyingKey.shortDescription).joined(separator: ", ")
    if let previous, previous.signed, previous.catalog.bundle == catalog.bundle, !options.newTrustRoot {
      let allowed = previous.catalog.signers ?? []
      makers = keys.filter { allowed.contains($0.verifyingKey) }
      guard !makers.isEmpty else {
        throw ResourceError(.integrity, "\(names) \(keys.count == 1 ? "is" : "are") not among the keys the previous catalog (version \(previous.catalog.version)) allows to sign the next versions (\(allowed.map(\.shortDescription).joined(separator: ", "))), so clients would refuse this catalog. Nothing was written. Sign with one of those keys (hand over to a new one with --next-signer, or sign with the old key and the new one together), or start a new trust root with --new-trust-root (every client must then pin the new key).")
      }
      chain = previous.catalog.handovers ?? []
      // Read from a host (--previous URL) or a folder: carried only if it verifies.
      do { try Handover.verify(chain, bundle: catalog.bundle, upTo: previous.catalog.version) } catch let error as TrustError {
        throw ResourceError(.integrity, "The hand-over chain of the previous catalog (version \(previous.catalog.version)) does not verify: \(error.message) Nothing was written. Check where --previous points; start over with --new-trust-root only if you mean to.")
      }
    }
    if previous == nil && !options.newTrustRoot {
      options.notify("no previous catalog in \(options.previous?.origin ?? "the output folder"): the hand-over chain starts here. If a signed catalog is already published, pack with --previous <its folder> so its chain is carried (odr publish refuses to drop it).")
    }
    if options.newTrustRoot {
      options.notify("new trust root: this catalog carries no hand-over chain; clients that pin an earlier key refuse it until they pin \(names) (--trust, ODR_TRUST, odr.json \"trust\") or reset their trust (odr trust reset \(catalog.bundle)).")
    }
    let signers = catalog.signers ?? keys.map(\.verifyingKey)
    // The statement's maker: a key the previous signers allow, an Ed25519
    // one when the next signers include Ed25519 keys (a hybrid key never
    // hands over to them).
    let namesClassic = signers.contains { !$0.isPostQuantum }
    let key = makers.first { !namesClassic || !$0.isPostQuantum } ?? makers[0]
    let next = signers.map(\.description).sorted()
    let current = (chain.last?.signers ?? [key.verifyingKey]).map(\.description).sorted()
    if next != current {
      let statement = try Handover(bundle: catalog.bundle, version: catalog.version, signers: signers, signedWith: key)
      if let downgrade = statement.downgrade {
        throw ResourceError(.integrity, "\(key.verifyingKey.shortDescription) is a post-quantum key, and the next signers (--next-signer, default the signing keys) include \(downgrade), without a post-quantum half: every client refuses a hand-over from post-quantum signing back to Ed25519 alone. Nothing was written. Name hybrid keys (odr signing-key new NAME --post-quantum), or start a new trust root with --new-trust-root (every client must then pin the new key).")
      }
      chain.append(statement)
    }
    return chain.isEmpty ? nil : chain
  }

  /// The catalog for the folder, without writing or encrypting anything
  /// (sizes and hashes are the plaintext's).
  public func makeCatalog(version: Int? = nil) throws -> Catalog {
    try makeCatalog(try readManifest(), version: version)
  }

  /// tags.json, published under `bundle` instead of its own when given.
  private func readManifest(bundle: String? = nil) throws -> PublisherManifest {
    let manifestURL = source.appending(path: "tags.json")
    // unreadable: the error below names the file
    guard let data = dropping(.isTheAnswer, { try Data(contentsOf: manifestURL) }) else {
      throw ResourceError(.notFound, "No tags.json in '\(source.path)'. A publisher folder holds tags.json and the files it tags (see README).")
    }
    var manifest = try PublisherManifest.decode(data)
    if let bundle { manifest.bundle = bundle }
    return manifest
  }

  private func makeCatalog(_ manifest: PublisherManifest, version: Int?) throws -> Catalog {
    var tags: [String: Catalog.Tag] = [:]
    var hashes: [String: (size: Int64, sha256: String)] = [:]
    for (name, spec) in manifest.tags {
      var files: [Catalog.File] = []
      for path in try expand(spec.files, tag: name) {
        let digest: (size: Int64, sha256: String)
        if let known = hashes[path] { digest = known } else {
          digest = try FileIO.sha256(of: source.appending(path: path))
          hashes[path] = digest
        }
        files.append(Catalog.File(path: path, size: digest.size, sha256: digest.sha256))
      }
      tags[name] = Catalog.Tag(category: spec.category, order: spec.order, preservationPriority: spec.preservationPriority,
                               secrets: spec.secrets, files: files)
    }
    let catalog = Catalog(bundle: manifest.bundle, version: version ?? manifest.version ?? 1, tags: tags)
    try catalog.validate()
    return catalog
  }

  /// Validates the documents of every secrets tag and encrypts them to the
  /// tag's recipients (fresh file keys), rewriting their entries to the
  /// ciphertext. Returns each ciphertext by its SHA-256.
  private func seal(_ catalog: inout Catalog, manifest: PublisherManifest, options: PackOptions) async throws -> [String: Data] {
    var sealed: [String: Data] = [:]
    for name in catalog.tags.keys.sorted() {
      guard var tag = catalog.tags[name], tag.secrets else { continue }
      for file in tag.files {
        if let other = catalog.tags.first(where: { !$0.value.secrets && $0.value.files.contains { $0.path == file.path } }) {
          throw ResourceError(.invalidSource, "'\(file.path)' is in the secrets tag '\(name)' and in '\(other.key)', which is not secret; it would be published in plaintext. Keep secrets files out of other tags.")
        }
      }
      let recipients = try self.recipients(of: name, manifest: manifest, options: options)
      let documents = try self.documents(of: name, tag, options: options)
      guard !recipients.isEmpty else {
        guard options.plaintextSecrets else {
          throw ResourceError(.invalidSource, "The secrets tag '\(name)' has no recipients, so its keys would be published in plaintext. Add the recipients of the machines that may read them (\"recipients\" in tags.json, --recipient age1…, --recipients-file F), or pass --plaintext-secrets to publish them unencrypted on purpose.")
        }
        options.notify("warning: the secrets tag '\(name)' is published in PLAINTEXT (--plaintext-secrets): anyone who can read the host can read its keys.")
        continue
      }
      tag.files = []
      for (file, plaintext) in documents {
        let ciphertext: Data
        do {
          ciphertext = try await Age.encrypt(plaintext, to: recipients, keyService: options.keyService,
                                             context: catalog.encryptionContext(of: name))
        } catch let error as TrustError {
          throw ResourceError(.invalidSource, "Cannot encrypt '\(file.path)' of tag '\(name)': \(error.message) Nothing was written.", underlying: error)
        }
        let sha256 = FileIO.hex(SHA256.hash(data: ciphertext))
        sealed[sha256] = ciphertext
        tag.files.append(Catalog.File(path: file.path, size: Int64(ciphertext.count), sha256: sha256))
      }
      tag.encryption = Catalog.Encryption(recipients: recipients.count)
      catalog.tags[name] = tag
    }
    return sealed
  }

  /// What `pack` would encrypt each secrets tag to, checked as `pack`
  /// checks it (documents, recipients and their mix), with nothing
  /// encrypted, asked of a key service or written: `odr pack --dry-run`.
  public func recipients(options: PackOptions = PackOptions()) throws -> [String: [AgeRecipient]] {
    let manifest = try readManifest(bundle: options.bundle)
    let catalog = try makeCatalog(manifest, version: nil)
    var plan: [String: [AgeRecipient]] = [:]
    for (name, tag) in catalog.tags where tag.secrets {
      let recipients = try recipients(of: name, manifest: manifest, options: options)
      _ = try documents(of: name, tag, options: options)
      if !recipients.isEmpty { try Age.checkMix(recipients) }
      plan[name] = recipients
    }
    return plan
  }

  /// A secrets tag's recipients: the options' and its own in tags.json, once each.
  private func recipients(of name: String, manifest: PublisherManifest, options: PackOptions) throws -> [AgeRecipient] {
    var recipients = options.recipients
    for text in manifest.tags[name]?.recipients ?? [] {
      do { recipients.append(try AgeRecipient(text)) } catch let error as TrustError {
        throw ResourceError(.invalidSource, "tags.json: tag '\(name)': \(error.message)")
      }
    }
    return Array(Set(recipients)).sorted { $0.description < $1.description }
  }

  /// The plaintext of a secrets tag's documents, each validated.
  private func documents(of name: String, _ tag: Catalog.Tag, options: PackOptions) throws -> [(Catalog.File, Data)] {
    try tag.files.map { file in
      let plaintext: Data
      do { plaintext = try Data(contentsOf: source.appending(path: file.path)) } catch {
        throw ResourceError(.io, "Cannot read '\(file.path)' of tag '\(name)'.")
      }
      try options.validateSecrets(file.path, plaintext)
      return (file, plaintext)
    }
  }

  /// An `APIKeys.json` in a tag that is not a secrets tag is published as
  /// it is, unchecked and unencrypted: say so before anything is written.
  private func warnOfKeysInPlainTags(_ catalog: Catalog, options: PackOptions) {
    for (name, tag) in catalog.tags.sorted(by: { $0.key < $1.key }) where !tag.secrets {
      for file in tag.files where file.path.split(separator: "/").last?.lowercased() == "apikeys.json" {
        options.notify("warning: '\(file.path)' is in '\(name)', which is not a secrets tag: it is published in plaintext, as any file. If it holds API keys, put it in a tag with \"secrets\": true (and recipients).")
      }
    }
  }

  /// A machine dropped from the recipients keeps what it fetched: say so.
  private func adviseOnRecipients(_ catalog: Catalog, previous: Catalog?, options: PackOptions) {
    for (name, tag) in catalog.tags.sorted(by: { $0.key < $1.key }) {
      guard let now = tag.encryption?.recipients, let before = previous?.tags[name]?.encryption?.recipients, now < before else { continue }
      options.notify("\(name) now has \(now) recipient\(now == 1 ? "" : "s") (was \(before)). A removed machine can no longer read new versions, but it keeps the keys it already fetched: rotate those API keys at their providers and publish the new values.")
    }
  }

  /// The regular files an entry list names: files as they are, folders
  /// (written with or without a trailing `/`) recursively; sorted, unique.
  private func expand(_ entries: [String], tag: String) throws -> [String] {
    var result = Set<String>()
    for entry in entries {
      let path = entry.hasSuffix("/") ? String(entry.dropLast()) : entry
      try Naming.validate(path: path, in: tag)
      try FileIO.refuseSymlinks(along: path, under: source, tag: tag)
      switch FileIO.kind(of: source.appending(path: path)) {
      case .file: result.insert(path)
      case .directory: result.formUnion(try FileIO.regularFiles(under: path, in: source, tag: tag))
      case .missing:
        throw ResourceError(.notFound, "Tag '\(tag)' lists '\(entry)', which is not in '\(source.path)'.")
      case .other:
        throw ResourceError(.invalidSource, "Tag '\(tag)' lists '\(entry)', which is neither a regular file nor a folder.")
      }
    }
    return result.sorted()
  }
}
