public import ODRKeyring

extension SecretStore {
  /// Every key of the service with its metadata (from odr's metadata
  /// record), sorted by name: what `odr exec` and `odr env` inject. An
  /// interrupted import is rolled back first, and a running one waited for
  /// (odr's import journal, under `lock`, default the service's).
  public func keys(lock: ImportLock? = nil) async throws -> [APIKey] {
    let items = try await ImportJournal.settledItems(of: self, lock: lock ?? ImportLock(service: service))
    let record = KeyMetadataRecord(json: items[KeyringInput.metadataName])
    return items.filter { !KeyringInput.isRecord($0.key) }.map { APIKey(name: $0.key, value: $0.value, metadata: record[$0.key] ?? KeyMetadata()) }
      .sorted { $0.name < $1.name }
  }
}
