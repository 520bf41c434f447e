import ODRKeyFormat
import FoundationEssentials
import ODRKeyring
import ODRBase

/// The write-ahead record of an import: the previous value of every key an
/// `odr fetch` is about to change (nil: the key did not exist), kept in the
/// keyring item `KeyringInput.journalName` until the import is complete,
/// with the importing process.
///
/// Imports of a service are serialized across processes by its
/// ``ImportLock``, held exclusively for the whole import; a reader of every
/// key holds it shared for its one search, a reader of one key takes no
/// lock. No reader writes: while a journal is there (an import running, or
/// one cut short), readers answer with its previous values — what a
/// roll-back would restore — so every reader sees the keys as they were
/// before the import until it is complete. The next importer (``settle(_:)``) or
/// `odr doctor --repair` puts the previous values back. A journal whose
/// importer still runs (one that uses another lock folder) is waited for,
/// never rolled back. Its values are secrets and stay in the keyring like
/// the keys themselves.
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
    // nil: parse(_:service:) refuses the journal as unreadable (fails closed)
    guard let journal = dropping(.isTheAnswer, { try JSONReader.decode(ImportJournal.self, from: Data(json.utf8)) }) else { return nil }
    self = journal
  }

  var json: String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    // encoding strings and dictionaries cannot fail
    return String(decoding: (dropping(.cannotFail) { try encoder.encode(self) }) ?? Data(), as: UTF8.self)
  }

  /// How long an importer waits for a running import (of another lock folder) to end.
  static let patience: Duration = .seconds(120)

  /// `items` (every value and record of a service, read in one search) as
  /// readers must see them: the journal's previous values put over what
  /// an unfinished import wrote. Writes nothing.
  static func settled(_ items: [String: String], service: String) throws -> [String: String] {
    guard let text = items[KeyringInput.journalName] else { return items }
    var items = items
    for (name, value) in try parse(text, service: service).previous { items[name] = value }
    items[KeyringInput.journalName] = nil
    return items
  }

  /// The value a reader must see for `name`, given what the store holds
  /// (nil: nothing) and the journal's text, if there is one.
  static func settled(_ name: String, stored: String?, journal: String?, service: String) throws -> String? {
    guard let journal, let previous = try parse(journal, service: service).previous[name] else { return stored }
    return previous
  }

  /// The journal in `text`. Fails closed: a journal that does not parse,
  /// or names a key or holds a value odr would never have written (it
  /// came from another keyring client), is refused rather than read over
  /// the keys.
  private static func parse(_ text: String, service: String) throws -> ImportJournal {
    guard let journal = ImportJournal(json: text), journal.previous.allSatisfy({ name, value in
      // validity probes: an entry odr would never write refuses the journal
      name != KeyringInput.journalName && (dropping(.isTheAnswer) { try KeyringInput.validate(name: name) }) != nil
        && value.map { value in dropping(.isTheAnswer) { try KeyringInput.validate(value: value, for: name) } != nil } ?? true
    }) else {
      throw KeysError(.interruptedImport, "An earlier import into \(service) was interrupted and its journal is unreadable, so some keys may hold new values. Delete the journal with `secret-tool clear service \(service) key \(KeyringInput.journalName)` and run `odr fetch` again.")
    }
    return journal
  }

  /// Reads the items and rolls back an interrupted import; the caller
  /// holds the import lock exclusively. Nil while the journal's importer
  /// still runs.
  static func settle(_ store: any SecretStore) async throws -> [String: String]? {
    var items = try await store.valuesAndRecords()
    guard let text = items[KeyringInput.journalName] else { return items }
    let journal = try parse(text, service: store.service)
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
