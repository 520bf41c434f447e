public import ODRKeyFormat
import FoundationEssentials
import ODRBase
public import ODRKeyring

/// The keyring side of `odr fetch`: writes a set of keys into a service,
/// all or nothing, under the service's ``ImportLock``, with a write-ahead
/// journal (`KeyringInput.journalName`) so that a cut-short import is
/// seen by readers as if it never began, and rolled back by the next one.
/// Only keys whose value or metadata changed are written; if a write fails,
/// the keys written so far are put back as they were.
public struct ImportTransaction: Sendable {
  public let store: any SecretStore
  /// Serializes imports of the service across processes.
  public let lock: ImportLock

  public init(store: any SecretStore, lock: ImportLock? = nil) {
    self.store = store
    self.lock = lock ?? ImportLock(for: store)
  }

  /// Writes `incoming` (the keys of `tags`); with `prune`, keys that an
  /// earlier import wrote and `incoming` lacks are deleted (never keys
  /// stored by `odr set` or other tools). With `dryRun`, nothing is
  /// written: the report says what would change.
  public func apply(_ incoming: [String: APIKey], prune: Bool, dryRun: Bool, tags: [String]) async throws -> ImportReport {
    try KeyringInput.validate(keyService: store.service)
    return try await write(incoming, prune: prune, dryRun: dryRun, tags: tags)
  }

  /// Puts back the keys of an import that was cut short (what the next
  /// import would do first: `odr doctor --repair`). Returns how many keys
  /// its journal named; 0 when there was none.
  public func repair() async throws -> Int {
    try await locked { () async throws -> Int? in
      let journal = try await store.valuesAndRecords()[KeyringInput.journalName]
      guard try await ImportJournal.settle(store) != nil else { return nil }
      try await store.bringToLayout()
      return journal.flatMap(ImportJournal.init(json:))?.previous.count ?? 0
    }
  }

  /// Runs `body` under the service's import lock, held exclusively, again
  /// and again while it answers nil (the importer of a journal found there
  /// still runs: it used another lock folder), for at most the patience.
  private func locked<T>(_ body: () async throws -> T?) async throws -> T {
    let clock = ContinuousClock()
    let deadline = clock.now + ImportJournal.patience
    while true {
      if let result = try await lock.withExclusive(body) { return result }
      guard clock.now < deadline else {
        throw KeyringError(.timeout, "Another odr process has been importing into \(store.service) for over \(ImportJournal.patience.components.seconds) s. Try again when it ends.")
      }
      try await Task.sleep(for: .milliseconds(50))
    }
  }

  /// Writes under the service's import lock, held for the whole import: no
  /// other import runs meanwhile and no reader sees a half-written state.
  private func write(_ incoming: [String: APIKey], prune: Bool, dryRun: Bool, tags: [String]) async throws -> ImportReport {
    try await locked { () async throws -> ImportReport? in
      guard let items = try await ImportJournal.settle(store) else { return nil }
      if !dryRun { try await store.bringToLayout() }
      return try await apply(incoming, to: items, prune: prune, dryRun: dryRun, tags: tags)
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
        : old == key.value && oldMetadata[key.name] == KeyMetadataRecord.recording(key.metadata, with: key.value) ? .unchanged : .changed
      entries.append(.init(name: key.name, outcome: outcome))
      if old != key.value { changes.append((key.name, key.value)) }
    }
    // Keys imported under other trust roots than this import's are the
    // keys of another publisher (or of none): replaced, or pruned.
    let roots = incoming.values.first?.metadata.importedUnder.map(Set.init)
    func underOtherRoots(_ name: String) -> Bool {
      guard let roots, let earlier = oldMetadata[name]?.importedUnder else { return false }
      return Set(earlier) != roots
    }
    let pruned = before.keys.filter { incoming[$0] == nil && (prune && oldMetadata.imported.contains($0) || underOtherRoots($0)) }.sorted()
    entries += pruned.map { .init(name: $0, outcome: .pruned) }
    changes += pruned.map { ($0, nil) }

    var newMetadata = oldMetadata
    for key in incoming.values { newMetadata[key.name] = KeyMetadataRecord.recording(key.metadata, with: key.value) }
    for name in pruned { newMetadata[name] = nil }
    if newMetadata.json != oldRecord { changes.append((KeyringInput.metadataName, newMetadata.json)) }
    before[KeyringInput.metadataName] = oldRecord
    let report = ImportReport(service: store.service, tags: tags, keys: entries.sorted { $0.name < $1.name }, dryRun: dryRun)
    guard !changes.isEmpty, !dryRun else { return report }

    // Write-ahead: if this process or the keyring dies half-way, readers
    // see the previous values and the next import puts them back
    // (ImportJournal.settle).
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
      throw KeyringError(error.code, "\(error.message) The import stopped after \(done.count) of \(changes.count) changes; the previous values are kept in the keyring's journal: readers (`odr get`, `exec`, `env`, apps) see them, and the next `odr fetch` or `odr doctor --repair` puts them back once the keyring answers.")
    } catch {
      let unrestored = await restore(done, to: before)
      guard unrestored.isEmpty else {
        throw KeysError(.interruptedImport, "\(error) Putting the previous values back failed too, so these keys hold new values for now: \(unrestored.joined(separator: ", ")). odr keeps the previous values in the keyring and puts them back at the next `odr fetch`, `odr exec` or `odr env` once the keyring works.", underlying: error)
      }
      // If the journal stays, readers see the values it restores anyway.
      _ = await droppingAsync(.isTheAnswer) { try await store.deleteValue(for: KeyringInput.journalName) }
      throw error
    }
    do { try await store.deleteValue(for: KeyringInput.journalName) } catch {
      throw KeysError(.interruptedImport, "\(error) The keys were written, but odr could not close the import, so readers still see the previous values and the next `odr fetch` puts them back. Run `odr fetch` again once the keyring works.", underlying: error)
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
