public import FoundationEssentials

/// Where odr keeps API keys: one value per key name, scoped to a service
/// (the bundle id).
///
/// Implementations validate names and values with ``KeyringInput`` before
/// any I/O, and throw ``KeyringError``.
///
/// ```swift
/// let store: any SecretStore = try SecretServiceStore(service: "com.example.demo")
/// try await store.setValue("k-123", for: "Weather")
/// let key = try await store.value(for: "Weather")
/// ```
public protocol SecretStore: Sendable {
  /// The service (bundle id) every item of this store belongs to.
  var service: String { get }

  /// Which store this is, as messages name it (default: the Secret Service).
  var kind: KeyStoreKind { get }

  /// The XDG state folder of the imports into this store (their lock,
  /// `ImportLock`); nil: this process's.
  var stateHome: URL? { get }

  /// Stores `value` under `name`, replacing any previous value.
  func setValue(_ value: String, for name: String) async throws

  /// The value stored under `name`; throws `KeyringError.Code.notFound` when there is none.
  func value(for name: String) async throws -> String

  /// The value under `name` and odr's import journal
  /// (``KeyringInput/journalName``), each nil when absent, looked up in that
  /// order: what a reader of one key needs (a journal written after the
  /// first lookup names the value it found as the previous one).
  func valueAndJournal(for name: String) async throws -> (value: String?, journal: String?)

  /// The values of many keys: one search of the service, or (Secret
  /// Service) one lookup per name for up to eight names, which is cheaper.
  /// `names == nil` means every key of the service. Missing names are
  /// absent from the result.
  func values(for names: Set<String>?) async throws -> [String: String]

  /// Every key's value and odr's records (``KeyringInput/metadataName``,
  /// ``KeyringInput/journalName``), in one search where the backend allows.
  func valuesAndRecords() async throws -> [String: String]

  /// Deletes the value stored under `name`. Returns false when there was none.
  @discardableResult
  func deleteValue(for name: String) async throws -> Bool

  /// The names of the keys stored for the service, sorted.
  func names() async throws -> [String]

  /// Deletes every key of the service. Returns how many were deleted.
  @discardableResult
  func deleteAll() async throws -> Int

  /// Brings every item of the service to the store's layout (one item per
  /// key, in the form every reader finds); returns how many items changed.
  /// Stores with a single layout have nothing to do (the default).
  @discardableResult
  func bringToLayout() async throws -> Int

  /// The value of `name` if it was stored as a catalog token for `origin`
  /// (`scheme://host:port`), else `KeyringError.Code.reserved` (odr.json
  /// `"auth"` may not send an arbitrary item to a host of its choosing).
  /// Stores that keep no such mark refuse every name (the default).
  func catalogToken(named name: String, origin: String) async throws -> String
}

extension SecretStore {
  public var stateHome: URL? { nil }

  public var kind: KeyStoreKind { .secretService }

  @discardableResult
  public func bringToLayout() async throws -> Int { 0 }

  public func valueAndJournal(for name: String) async throws -> (value: String?, journal: String?) {
    func present(_ name: String) async throws -> String? {
      do { return try await self.value(for: name) } catch let error as KeyringError where error.code == .notFound { return nil }
    }
    let stored = try await present(name)
    return (stored, try await present(KeyringInput.journalName))
  }

  public func catalogToken(named name: String, origin: String) async throws -> String {
    throw KeyringError(.reserved, "The keyring item '\(name)' of \(service) cannot be a catalog token for \(origin): this store keeps no catalog tokens (only the Secret Service does: odr set \(name) --service \(service) --catalog-token-for \(origin)).")
  }

  public func valuesAndRecords() async throws -> [String: String] {
    try await values(for: nil).merging(try await values(for: [KeyringInput.metadataName, KeyringInput.journalName])) { $1 }
  }
}
