import FoundationEssentials
public import ODRKeyring
public import ODRResources
public import ODRTrust

/// The `odr fetch` pipeline (docs/design.md, "Keyring layout"): read the files of the secrets
/// tags (verified against the catalog, decrypted in memory), parse them,
/// and write the keys to the store. Other tags are begun and ended as
/// `odr begin` would.
///
/// All or nothing: every document is parsed and validated before the first
/// write, only keys whose value or metadata changed are written, and if a
/// write fails the keys written so far are put back as they were. No
/// plaintext of a secrets tag ever reaches the disk: encrypted tags are
/// cached as ciphertext, plaintext ones are read into memory only.
public struct KeyImporter: Sendable {
  public let catalog: ResourceCatalog
  public let store: any SecretStore
  /// Where the age identities that open encrypted tags come from; asked
  /// only when an encrypted tag is read.
  public let identities: @Sendable () async throws -> [AgeIdentity]
  /// Serializes imports of the service across processes.
  public let lock: ImportLock

  public init(catalog: ResourceCatalog, store: any SecretStore,
              identities: @escaping @Sendable () async throws -> [AgeIdentity] = { [] }, lock: ImportLock? = nil) {
    self.catalog = catalog
    self.store = store
    self.identities = identities
    self.lock = lock ?? ImportLock(service: store.service)
  }

  /// Fetches `tags`; with `prune`, keys that an earlier import wrote and no
  /// document holds any more are deleted (never keys stored by `odr set` or
  /// other tools). With `dryRun`, nothing is written: the report says what
  /// would change. `progress` hears of the downloads.
  public func fetch(tags: [String], prune: Bool = false, dryRun: Bool = false,
                    progress: ResourceRequest.Progress? = nil) async throws -> ImportReport {
    try KeyringInput.validate(keyService: store.service)
    let resolved = try tags.map { ($0, try catalog.tag($0)) }
    let plain = resolved.filter { !$0.1.secrets }.map(\.0)
    if !plain.isEmpty {
      let request = try ResourceRequest(tags: Set(plain), catalog: catalog)
      try await request.beginAccessing(progress: progress)
      request.endAccessing()
    }
    let secretTags = resolved.filter(\.1.secrets)
    // Plaintext cached by an older odr, if any, goes (never blobs other tags use).
    let others = catalog.catalog.tags.values.filter { !$0.secrets }
    catalog.store.remove(secretTags.filter { $0.1.encryption == nil }.flatMap(\.1.files), keepingThoseUsedBy: Array(others))
    guard !secretTags.isEmpty else { return ImportReport(service: store.service, tags: tags, keys: []) }
    let incoming = try await documentKeys(secretTags, inMemoryOnly: false)
    return try await write(incoming, prune: prune, dryRun: dryRun, tags: tags)
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
        documents.append((file.path, try decrypt(data, file: file, tag: name, recipients: tag.encryption?.recipients ?? 0, with: opened ?? [])))
      }
    }
    return try Self.keys(of: documents)
  }

  private func decrypt(_ data: Data, file: Catalog.File, tag: String, recipients: Int, with identities: [AgeIdentity]) throws -> Data {
    do { return try Age.decrypt(data, identities: identities) } catch let error as TrustError where error.code == .noIdentity {
      let tried = identities.isEmpty ? "this machine has no age identity" : "none of this machine's \(identities.count) age identit\(identities.count == 1 ? "y" : "ies") is one of them"
      throw KeysError(.notRecipient, "\(tag) (catalog version \(catalog.catalog.version) of \(catalog.catalog.bundle)) is encrypted to \(recipients) recipient\(recipients == 1 ? "" : "s"), and \(tried). Create an identity with `odr identity new NAME` (or print yours with `odr identity recipient NAME`), send the age1… recipient it prints to the publisher, and fetch again once they have re-packed. In CI, pass the identity in ODR_IDENTITY or --identity-file.")
    } catch let error as TrustError {
      throw ResourceError(.integrity, "'\(file.path)' of \(tag) matches the catalog's SHA-256 but cannot be decrypted: \(error.message) The publisher's pack is damaged; nothing was imported.")
    }
  }

  private static func keys(of documents: [(path: String, data: Data)]) throws -> [String: APIKey] {
    var keys: [String: APIKey] = [:]
    var origin: [String: String] = [:]
    for (path, data) in documents {
      let document: APIKeysDocument
      do { document = try APIKeysDocument.parse(data) } catch {
        throw KeysError(.invalidDocument, "\(path): \(error.message)", underlying: error)
      }
      for key in document.keys {
        if let first = origin.updateValue(path, forKey: key.name) {
          throw KeysError(.invalidDocument, "Key '\(key.name)' is defined in both \(first) and \(path). Nothing was imported.")
        }
        keys[key.name] = key
      }
    }
    return keys
  }

  /// Writes under the service's import lock, held for the whole import: no
  /// other import runs meanwhile and no reader sees a half-written state.
  private func write(_ incoming: [String: APIKey], prune: Bool, dryRun: Bool, tags: [String]) async throws -> ImportReport {
    let clock = ContinuousClock()
    let deadline = clock.now + ImportJournal.patience
    while true {
      let report = try await lock.withExclusive { () async throws -> ImportReport? in
        // Nil while the importer of a journal found here still runs (it used another lock folder).
        guard let items = try await ImportJournal.settle(store) else { return nil }
        return try await apply(incoming, to: items, prune: prune, dryRun: dryRun, tags: tags)
      }
      if let report { return report }
      guard clock.now < deadline else {
        throw KeyringError(.timeout, "Another odr process has been importing into \(store.service) for over \(ImportJournal.patience.components.seconds) s. Try again when it ends.")
      }
      try await Task.sleep(for: .milliseconds(50))
    }
  }

  private func apply(_ incoming: [String: APIKey], to items: [String: String], prune: Bool, dryRun: Bool,
                     tags: [String]) async throws -> ImportReport {
    let oldRecord = items[KeyringInput.metadataName]
    var before = items.filter { !KeyringInput.isRecord($0.key) }
    let oldMetadata = KeyMetadataRecord(json: oldRecord)
    var entries: [ImportReport.Entry] = []
    var changes: [(name: String, value: String?)] = []  // nil: delete
    for key in incoming.values.sorted(by: { $0.name < $1.name }) {
      let old = before[key.name]
      let outcome: ImportReport.Outcome = old == nil ? .added
        : old == key.value && oldMetadata[key.name] == key.metadata ? .unchanged : .changed
      entries.append(.init(name: key.name, outcome: outcome))
      if old != key.value { changes.append((key.name, key.value)) }
    }
    let pruned = prune ? before.keys.filter { incoming[$0] == nil && oldMetadata.imported.contains($0) }.sorted() : []
    entries += pruned.map { .init(name: $0, outcome: .pruned) }
    changes += pruned.map { ($0, nil) }

    var newMetadata = oldMetadata
    for key in incoming.values { newMetadata[key.name] = key.metadata }
    for name in pruned { newMetadata[name] = nil }
    if newMetadata.json != oldRecord { changes.append((KeyringInput.metadataName, newMetadata.json)) }
    before[KeyringInput.metadataName] = oldRecord
    let report = ImportReport(service: store.service, tags: tags, keys: entries.sorted { $0.name < $1.name }, dryRun: dryRun)
    guard !changes.isEmpty, !dryRun else { return report }

    // Write-ahead: if this process or the keyring dies half-way, the next
    // reader puts these values back (ImportJournal.settle).
    let journal = ImportJournal(previous: Dictionary(uniqueKeysWithValues: changes.map { ($0.name, before[$0.name]) }))
    try await store.setValue(journal.json, for: KeyringInput.journalName)
    var done: [String] = []
    do {
      for change in changes {
        if let value = change.value {
          try await store.setValue(value, for: change.name)
        } else {
          try await store.deleteValue(for: change.name)
        }
        done.append(change.name)
      }
    } catch let error as KeyringError where [.timeout, .noProvider, .noSessionBus].contains(error.code) {
      // The keyring stopped answering: each restore would wait for it too.
      // Stop now; the journal lets the next reader put the values back.
      throw KeyringError(error.code, "\(error.message) The import stopped after \(done.count) of \(changes.count) changes; the previous values are kept in the keyring's journal and are put back by the next `odr fetch`, `odr exec` or `odr env` once the keyring answers.")
    } catch {
      let unrestored = await restore(done, to: before)
      guard unrestored.isEmpty else {
        throw KeysError(.interruptedImport, "\(error) Putting the previous values back failed too, so these keys hold new values for now: \(unrestored.joined(separator: ", ")). odr keeps the previous values in the keyring and puts them back at the next `odr fetch`, `odr exec` or `odr env` once the keyring works.", underlying: error)
      }
      _ = try? await store.deleteValue(for: KeyringInput.journalName)  // if it stays, the next reader restores the same values
      throw error
    }
    do { try await store.deleteValue(for: KeyringInput.journalName) } catch {
      throw KeysError(.interruptedImport, "\(error) The keys were written, but odr could not close the import, so the next `odr fetch`, `odr exec` or `odr env` will put the previous values back. Run `odr fetch` again once the keyring works.", underlying: error)
    }
    return report
  }

  /// Puts `names` back to `previous` (deleting those that did not exist).
  /// Returns the names that could not be put back.
  private func restore(_ names: [String], to previous: [String: String]) async -> [String] {
    var failed: [String] = []
    for name in names.reversed() {
      do {
        if let value = previous[name] {
          try await store.setValue(value, for: name)
        } else {
          try await store.deleteValue(for: name)
        }
      } catch {
        failed.append(name)
      }
    }
    return failed.sorted()
  }
}
