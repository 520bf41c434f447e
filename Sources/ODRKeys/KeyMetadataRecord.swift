import ODRKeyFormat
import Crypto
import FoundationEssentials
import ODRBase
import ODRKeyring

/// The metadata of a service's keys, kept as JSON in the keyring item
/// `KeyringInput.metadataName` so every consumer (exec, provider, HTTP
/// client) can read it without the pack. Holds no values. It has an entry
/// (empty when the key has no metadata) for every key `odr fetch` imported:
/// the keys `--prune` may delete.
struct KeyMetadataRecord: Equatable {
  private var entries: [String: KeyMetadata]

  /// Reads a record; nil or unreadable JSON gives an empty one.
  init(json: String?) {
    // a damaged record reads as none: prune then deletes nothing, and the next fetch rewrites it
    entries = json.flatMap { json in dropping(.isTheAnswer) { try JSONReader.decode([String: KeyMetadata].self, from: Data(json.utf8)) } } ?? [:]
  }

  /// A key's metadata; keys without any read as empty metadata. Setting
  /// marks the key as imported; nil forgets it.
  subscript(name: String) -> KeyMetadata? {
    get { entries[name] ?? KeyMetadata() }
    set { entries[name] = newValue }
  }

  /// `name`'s metadata as it goes with `value`: the recorded metadata when
  /// it was recorded with that value (or before odr recorded values), else
  /// none — the item now holding the name is not the one odr recorded.
  func metadata(for name: String, value: String) -> KeyMetadata {
    guard var metadata = entries[name] else { return KeyMetadata() }
    if let digest = metadata.valueDigest, digest != Self.digest(value) { return KeyMetadata() }
    metadata.valueDigest = nil
    return metadata
  }

  /// `metadata` as recorded with `value`.
  static func recording(_ metadata: KeyMetadata, with value: String) -> KeyMetadata {
    var recorded = metadata
    recorded.valueDigest = digest(value)
    return recorded
  }

  /// The hex SHA-256 of `value`.
  static func digest(_ value: String) -> String {
    SHA256.hash(data: Data(value.utf8)).map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
  }

  /// The keys an `odr fetch` imported (those recorded by odr 0.2 or
  /// later), not those whose metadata the user set.
  var imported: Set<String> { Set(entries.filter { $0.value.setByUser != true }.keys) }

  /// Whether `name` has an entry (imported, or metadata the user set).
  func holds(_ name: String) -> Bool { entries[name] != nil }

  /// The record as stable JSON, or nil when it holds nothing.
  var json: String? {
    guard !entries.isEmpty else { return nil }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    // encoding strings and dictionaries cannot fail
    return (dropping(.cannotFail) { try encoder.encode(entries) }).map { String(decoding: $0, as: UTF8.self) }
  }
}
