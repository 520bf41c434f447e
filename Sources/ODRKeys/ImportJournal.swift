import FoundationEssentials
import ODRKeyring
import ODRResources

/// The write-ahead record of an import: the previous value of every key an
/// `odr fetch` is about to change (nil: the key did not exist), kept in the
/// keyring item ``KeyringInput/journalName`` until the import is complete,
/// with the importing process.
///
/// Imports of a service are serialized across processes by its
/// ``ImportLock``, held exclusively for the whole import; readers hold it
/// shared. So a reader never sees half an import: if it finds a journal, it
/// takes the lock exclusively — the importer has finished or died by then —
/// and, if the journal is still there and its importer is gone, puts the
/// previous values back (``settledItems(of:lock:)``: `odr fetch`, `odr exec`,
/// `odr env`, ``APIKeyProvider``). A journal whose importer still runs (one
/// that uses another lock folder) is waited for, never rolled back. Its
/// values are secrets and stay in the keyring like the keys themselves.
struct ImportJournal: Codable, Equatable {
  /// Key name -> the value it had before the import; nil: it did not exist.
  var previous: [String: String?]
  /// The process that wrote the journal (nil in journals of older odr versions).
  var importer: ProcessIdentity?

  init(previous: [String: String?], importer: ProcessIdentity? = .current) {
    self.previous = previous
    self.importer = importer
  }

  init?(json: String) {
    guard let journal = try? JSONDecoder().decode(ImportJournal.self, from: Data(json.utf8)) else { return nil }
    self = journal
  }

  var json: String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
  }

  /// How long a reader waits for a running import (of another lock folder) to end.
  static let patience: Duration = .seconds(120)

  /// Every value and record of `store`, read under `lock` (shared), after
  /// settling an import that was cut short.
  static func settledItems(of store: any SecretStore, lock: ImportLock) async throws -> [String: String] {
    let items = try await lock.withShared { try await store.valuesAndRecords() }
    guard items[KeyringInput.journalName] != nil else { return items }
    let clock = ContinuousClock()
    let deadline = clock.now + patience
    while true {
      if let settled = try await lock.withExclusive({ try await settle(store) }) { return settled }
      guard clock.now < deadline else {
        throw KeyringError(.timeout, "An import into \(store.service) by another odr process has been running for over \(patience.components.seconds) s. Try again when it ends.")
      }
      try await Task.sleep(for: .milliseconds(50))
    }
  }

  /// Reads the items and rolls back an interrupted import; the caller holds
  /// the import lock exclusively. Nil while the journal's importer still runs.
  static func settle(_ store: any SecretStore) async throws -> [String: String]? {
    var items = try await store.valuesAndRecords()
    guard let text = items[KeyringInput.journalName] else { return items }
    guard let journal = ImportJournal(json: text) else {
      throw KeysError(.interruptedImport, "An earlier import into \(store.service) was interrupted and its journal is unreadable, so some keys may hold new values. Delete the journal with `secret-tool clear service \(store.service) key \(KeyringInput.journalName)` and run `odr fetch` again.")
    }
    if let importer = journal.importer, importer.isLive, importer != .current { return nil }
    for (name, value) in journal.previous.sorted(by: { $0.key < $1.key }) {
      if let value {
        try await store.setValue(value, for: name)
      } else {
        try await store.deleteValue(for: name)
      }
      items[name] = value
    }
    try await store.deleteValue(for: KeyringInput.journalName)
    items[KeyringInput.journalName] = nil
    return items
  }
}
