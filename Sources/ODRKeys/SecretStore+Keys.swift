public import ODRKeyFormat
public import ODRKeyring
import ODRBase

extension SecretStore {
  /// Every key of the service with its metadata (from odr's metadata
  /// record), sorted by name: what `odr exec` and `odr env` inject. Read in
  /// one search holding `lock` (default: the service's import lock) shared,
  /// so no import starts half-way through the search; after an import that
  /// was cut short, its keys read as they were before it (odr's import
  /// journal). Writes nothing to the keyring.
  public func keys(lock: ImportLock? = nil) async throws -> [APIKey] {
    let all = try await (lock ?? ImportLock(for: self)).withShared { try await valuesAndRecords() }
    let items = try ImportJournal.settled(all, service: service)
    let record = KeyMetadataRecord(json: items[KeyringInput.metadataName])
    return items.filter { !KeyringInput.isRecord($0.key) }.map { APIKey(name: $0.key, value: $0.value, metadata: record.metadata(for: $0.key, value: $0.value)) }
      .sorted { $0.name < $1.name }
  }

  /// The value of the key `name`, as ``keys(lock:)`` would read it: the key's
  /// lookup, then the import journal's (in that order: a journal written
  /// after the first lookup names the value it read as the previous one).
  public func keyValue(named name: String) async throws -> String {
    let (stored, journal) = try await valueAndJournal(for: name)
    guard let value = try ImportJournal.settled(name, stored: stored, journal: journal, service: service) else {
      // the names only serve a suggestion
      throw KeyringError.notFound(name, service: service, store: kind, among: await droppingAsync(.bestEffort) { try await names() })
    }
    return value
  }

  /// The key `name` with its metadata: ``keyValue(named:)`` and the
  /// metadata record.
  public func key(named name: String) async throws -> APIKey {
    let value = try await keyValue(named: name)
    return APIKey(name: name, value: value, metadata: try await metadataRecord().metadata(for: name, value: value))
  }

  /// Stores `value` for `name` with metadata the user gives (`odr set
  /// --host …`: the same fields a catalog's APIKeys document carries),
  /// marked as set by the user, under the service's import lock. Refuses
  /// to replace the metadata an `odr fetch` imported, unless `force` (the
  /// next fetch of that catalog puts its own back).
  public func setKey(_ value: String, for name: String, metadata: KeyMetadata, force: Bool) async throws {
    try await ImportLock(for: self).withExclusive {
      var record = try await metadataRecord()
      if !force, record.imported.contains(name), let existing = record[name], existing.hosts != nil {
        throw KeysError(.invalidDocument, """
          \(name) of \(service) has metadata from its catalog\(existing.hosts.map { " (its hosts: \($0.joined(separator: ", ")))" } ?? ""); \
          --force replaces it with yours (the next odr fetch of that catalog puts its own back).
          """)
      }
      var mine = metadata
      mine.setByUser = true
      mine.importedUnder = nil
      record[name] = KeyMetadataRecord.recording(mine, with: value)
      try await setValue(value, for: name)
      if let json = record.json { try await setValue(json, for: KeyringInput.metadataName) }
    }
  }

  /// odr's metadata record, as readers must see it.
  func metadataRecord() async throws -> KeyMetadataRecord {
    let (stored, journal) = try await valueAndJournal(for: KeyringInput.metadataName)
    return KeyMetadataRecord(json: try ImportJournal.settled(KeyringInput.metadataName, stored: stored, journal: journal, service: service))
  }
}

extension BlockingReads {
  /// ``SecretStore/keyValue(named:)`` on the calling thread (see
  /// ``BlockingReads``): for `odr get`.
  public func keyValueBlocking(named name: String) throws -> String {
    let (stored, journal) = try valueAndJournalBlocking(for: name)
    guard let value = try ImportJournal.settled(name, stored: stored, journal: journal, service: service) else {
      // the names only serve a suggestion
      throw KeyringError.notFound(name, service: service, store: kind, among: dropping(.bestEffort) { try namesBlocking() })
    }
    return value
  }
}
