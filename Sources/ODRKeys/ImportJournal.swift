import FoundationEssentials
import ODRKeyring

/// The write-ahead record of an import: the previous value of every key an
/// `odr fetch` is about to change (nil: the key did not exist), kept in the
/// keyring item ``KeyringInput/journalName`` until the import is complete.
///
/// If the import is cut short — the keyring daemon dies, odr is killed, the
/// machine stops — the journal is still there, and the next reader of the
/// service's keys (``settledItems(of:)``: `odr fetch`, `odr exec`, `odr env`,
/// ``APIKeyProvider``) puts the previous values back before it reads. Its
/// values are secrets and stay in the keyring like the keys themselves.
struct ImportJournal: Codable, Equatable {
  /// Key name -> the value it had before the import; nil: it did not exist.
  var previous: [String: String?]

  init(previous: [String: String?]) { self.previous = previous }

  init?(json: String) {
    guard let journal = try? JSONDecoder().decode(ImportJournal.self, from: Data(json.utf8)) else { return nil }
    self = journal
  }

  var json: String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
  }

  /// Every value and record of `store`, after rolling back an interrupted
  /// import if its journal is there.
  static func settledItems(of store: any SecretStore) async throws -> [String: String] {
    var items = try await store.valuesAndRecords()
    guard let text = items[KeyringInput.journalName] else { return items }
    guard let journal = ImportJournal(json: text) else {
      throw KeysError(.interruptedImport, "An earlier import into \(store.service) was interrupted and its journal is unreadable, so some keys may hold new values. Delete the journal with `secret-tool clear service \(store.service) key \(KeyringInput.journalName)` and run `odr fetch` again.")
    }
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
