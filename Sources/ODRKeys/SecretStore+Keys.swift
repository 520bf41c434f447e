public import ODRKeyring

extension SecretStore {
  /// Every key of the service with its metadata (from odr's metadata
  /// record), sorted by name: what `odr exec` and `odr env` inject.
  public func keys() async throws -> [APIKey] {
    let (values, metadata) = try await valuesAndMetadata()
    let record = KeyMetadataRecord(json: metadata)
    return values.map { APIKey(name: $0.key, value: $0.value, metadata: record[$0.key] ?? KeyMetadata()) }
      .sorted { $0.name < $1.name }
  }
}
