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

  /// The key `name` with its metadata, read as ``keys(lock:)`` reads them;
  /// `.notFound` names the keys there are.
  public func key(named name: String, lock: ImportLock? = nil) async throws -> APIKey {
    let keys = try await keys(lock: lock)
    guard let key = keys.first(where: { $0.name == name }) else {
      throw KeyringError(.notFound, "No key '\(name)' in the keyring for \(service) (keys: \(keys.map(\.name).joined(separator: ", "))). Run `odr fetch` first, or check --service.")
    }
    return key
  }
}
