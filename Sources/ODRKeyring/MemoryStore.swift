public import FoundationEssentials

/// A process-local ``SecretStore``: for tests of the layers above the
/// keyring and for one-shot CI injection. Nothing is written to disk.
public actor MemoryStore: SecretStore {
  public nonisolated let service: String
  public nonisolated var kind: KeyStoreKind { .memory }
  public nonisolated let stateHome: URL?
  private var items: [String: String]

  /// Creates a store for `service`, optionally pre-filled; `stateHome`:
  /// where its imports' lock lives (default: this process's XDG state folder).
  public init(service: String, items: [String: String] = [:], stateHome: URL? = nil) {
    self.service = service
    self.stateHome = stateHome
    self.items = items
  }

  public func setValue(_ value: String, for name: String) throws {
    try KeyringInput.validate(name: name)
    try KeyringInput.validate(value: value, for: name)
    items[name] = value
  }

  public func value(for name: String) throws -> String {
    try KeyringInput.validate(name: name)
    guard let value = items[name] else { throw KeyringError.notFound(name, service: service, store: kind) }
    return value
  }

  public func values(for names: Set<String>?) throws -> [String: String] {
    guard let names else { return items.filter { !KeyringInput.isRecord($0.key) } }
    for name in names { try KeyringInput.validate(name: name) }
    return items.filter { names.contains($0.key) }
  }

  public func valuesAndRecords() -> [String: String] { items }

  @discardableResult
  public func deleteValue(for name: String) throws -> Bool {
    try KeyringInput.validate(name: name)
    return items.removeValue(forKey: name) != nil
  }

  public func names() -> [String] { items.keys.filter { !KeyringInput.isRecord($0) }.sorted() }

  @discardableResult
  public func deleteAll() -> Int {
    defer { items.removeAll() }
    return names().count
  }
}
