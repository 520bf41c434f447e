public import ODRKeyFormat
import FoundationEssentials
public import ODRBase
public import ODRAge
import ODRCatalog
public import ODRKeyring
public import ODRResources
import ODRSigning

/// The `odr fetch` pipeline (docs/design.md, "Keyring layout"): read the files of the secrets
/// tags (verified against the catalog, decrypted in memory), parse them,
/// and write the keys to the store. Other tags are begun and ended as
/// `odr begin` would.
///
/// All or nothing: every document is parsed and validated before the first
/// write, which ``ImportTransaction`` does under the service's lock. No
/// plaintext of a secrets tag ever reaches the disk: encrypted tags are
/// cached as ciphertext, plaintext ones are read into memory only.
public struct KeyImporter: Sendable {
  public let catalog: ResourceCatalog
  public let store: any SecretStore
  /// Where the age identities that open encrypted tags come from; asked
  /// only when an encrypted tag is read.
  public let identities: @Sendable () async throws -> [AgeIdentity]
  /// Opens the AWS KMS stanzas (`awskms:` recipients) when no identity is
  /// a recipient: ODRTransports' AWSKMS with the job's AWS credentials; nil
  /// when there are none.
  public let keyService: (any KeyWrapService)?
  /// Serializes imports of the service across processes.
  public let lock: ImportLock

  public init(catalog: ResourceCatalog, store: any SecretStore,
              identities: @escaping @Sendable () async throws -> [AgeIdentity] = { [] },
              keyService: (any KeyWrapService)? = nil, lock: ImportLock? = nil) {
    self.catalog = catalog
    self.store = store
    self.identities = identities
    self.keyService = keyService
    self.lock = lock ?? ImportLock(for: store)
  }

  /// Fetches `tags`; with `prune`, keys that an earlier import wrote and no
  /// document holds any more are deleted (never keys stored by `odr set` or
  /// other tools). With `dryRun`, nothing is written: the report says what
  /// would change. `progress` hears of the downloads.
  public func fetch(tags: [String], prune: Bool = false, dryRun: Bool = false,
                    progress: ResourceRequest.LoadObserver? = nil) async throws -> ImportReport {
    try KeyringInput.validate(keyService: store.service)
    let resolved = try tags.map { ($0, try catalog.tag($0)) }
    let plain = resolved.filter { !$0.1.secrets }.map(\.0)
    if !plain.isEmpty {
      let request = try ResourceRequest(tags: Set(plain), catalog: catalog)
      try await request.beginAccessing(observing: progress)
      request.endAccessing()
    }
    let secretTags = resolved.filter(\.1.secrets)
    // Plaintext cached by an older odr, if any, goes (never blobs other tags use).
    let others = catalog.catalog.tags.values.filter { !$0.secrets }
    catalog.store.remove(secretTags.filter { $0.1.encryption == nil }.flatMap(\.1.files), keepingThoseUsedBy: Array(others))
    guard !secretTags.isEmpty else { return ImportReport(service: store.service, tags: tags, keys: []) }
    // Each key carries the trust roots it was imported under.
    let incoming = try await documentKeys(secretTags, inMemoryOnly: false).mapValues { key in
      var metadata = key.metadata
      metadata.importedUnder = catalog.trustRoots
      return APIKey(name: key.name, value: key.value, metadata: metadata)
    }
    return try await ImportTransaction(store: store, lock: lock).apply(incoming, prune: prune, dryRun: dryRun, tags: tags)
  }

  /// The keys of the secrets tags among `tags`, read straight from the
  /// catalog into memory, verified and decrypted, without the keyring and
  /// without writing anything to disk (`odr exec --fetch`). Every tag must
  /// exist and at least one must carry secrets.
  public func keysInMemory(tags: [String]) async throws -> [APIKey] {
    let secretTags = try tags.map { ($0, try catalog.tag($0)) }.filter(\.1.secrets)
    guard !secretTags.isEmpty else {
      throw ResourceError(.notFound, "\(tags.joined(separator: ", ")) carries no secrets: name a tag whose \"secrets\" is true, for example APIKeys.")
    }
    return try await documentKeys(secretTags, inMemoryOnly: true).values.sorted { $0.name < $1.name }
  }

  /// Every key of every document of `tags`, refusing a name defined twice.
  private func documentKeys(_ tags: [(String, Catalog.Tag)], inMemoryOnly: Bool) async throws -> [String: APIKey] {
    var documents: [(path: String, data: Data)] = []
    var opened: [AgeIdentity]?
    for (name, tag) in tags {
      var files: [(file: Catalog.File, data: Data)] = []
      if inMemoryOnly {
        for file in tag.files { files.append((file, try await catalog.verifiedData(of: file))) }
      } else {
        files = try await catalog.secretData(of: tag)
      }
      for (file, data) in files {
        guard tag.encryption != nil else {
          documents.append((file.path, data))
          continue
        }
        if opened == nil { opened = try await identities() }
        do {
          documents.append((file.path, try await decrypt(data, file: file, tag: name, recipients: tag.encryption?.recipients ?? 0, with: opened ?? [])))
        } catch let error as KeysError where error.code == .notRecipient && !(opened ?? []).isEmpty && !inMemoryOnly {
          throw await removedRecipient(error, tag: name)
        }
      }
    }
    return try APIKeysDocument.keys(of: documents)
  }

  /// A machine that has an identity and keys an earlier fetch imported, but
  /// is not among the recipients now, was most likely removed by the
  /// publisher: sending its recipient again is not the first advice.
  private func removedRecipient(_ error: KeysError, tag: String) async -> KeysError {
    // The metadata record exists only after an `odr fetch` imported keys; a
    // keyring that cannot be read now keeps the general advice.
    guard let imported = await droppingAsync(.isTheAnswer, { try await store.values(for: [KeyringInput.metadataName]) }), !imported.isEmpty else { return error }
    let bundle = catalog.catalog.bundle
    return KeysError(.notRecipient, "\(tag) (catalog version \(catalog.catalog.version) of \(bundle)) is no longer encrypted to this machine: it holds keys an earlier fetch imported, so the publisher has most likely removed its recipient. The keys it holds stay in the keyring (`odr delete --all --service \(bundle)` removes them; expect them to be rotated). If this machine should still read \(tag), ask the publisher to add its recipient back (`odr identity recipient NAME` prints it).")
  }

  private func decrypt(_ data: Data, file: Catalog.File, tag: String, recipients: Int, with identities: [AgeIdentity]) async throws -> Data {
    let context = catalog.catalog.encryptionContext(of: tag)
    do { return try await Age.decrypt(data, identities: identities, keyService: keyService, context: context) } catch let error as TrustError where error.code == .noIdentity {
      var what = "\(tag) (catalog version \(catalog.catalog.version) of \(catalog.catalog.bundle)) is encrypted to \(recipients) recipient\(recipients == 1 ? "" : "s")"
      let keys = Age.keyServiceRecipients(of: data)
      if !keys.isEmpty {
        // Only reached without AWS credentials: with them, KMS's own answer is the error.
        what += " (among them the AWS KMS key\(keys.count == 1 ? "" : "s") \(keys.joined(separator: ", ")), which odr opens with AWS credentials, and found none: AWS_ROLE_ARN with AWS_WEB_IDENTITY_TOKEN_FILE, GitHub Actions' id-token: write with AWS_ROLE_ARN, or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)"
      }
      guard !identities.isEmpty else {
        // The kernel keyring is emptied at reboot, its identities with it.
        let reboot = store.kind == .kernel ? " The kernel keyring holds no identity: it is emptied at reboot, so import yours again from your copy (`odr identity import NAME --store kernel < FILE`)." : ""
        throw KeysError(.notRecipient, "\(what), and this machine has no age identity.\(reboot) Give it the identity the publisher encrypted to: in CI, ODR_IDENTITY (a secret) or --identity-file; on a workstation, `odr identity new NAME`, then send the age1… recipient it prints to the publisher and fetch again once they have re-packed.")
      }
      let mine = identities.map(\.recipient.description).joined(separator: ", ")
      throw KeysError(.notRecipient, "\(what), and none of this machine's \(identities.count) age identit\(identities.count == 1 ? "y" : "ies") is one of them (\(identities.count == 1 ? "its recipient" : "their recipients"): \(mine)). Ask the publisher to add \(identities.count == 1 ? "it" : "one of them") and re-pack, or give odr the identity the tag was encrypted to (ODR_IDENTITY, --identity-file).")
    } catch let error as TrustError where error.code == .agePassphrase {
      throw ResourceError(.integrity, "'\(file.path)' of \(tag) is encrypted with a passphrase, not to recipients; odr cannot open it. The publisher must re-pack it with `odr pack --recipient …`; nothing was imported.")
    } catch let error as TrustError {
      throw ResourceError(.integrity, "'\(file.path)' of \(tag) matches the catalog's SHA-256 but cannot be decrypted: \(error.message) The publisher's pack is damaged; nothing was imported.")
    }
  }
}
