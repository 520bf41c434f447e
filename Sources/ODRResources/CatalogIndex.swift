import FoundationEssentials
import ODRBase
import ODRCatalog

/// What this machine remembers about each catalog location
/// (`${XDG_CACHE_HOME}/odr/_catalogs.json`: no bundle id starts with `_`,
/// so a catalog claiming the bundle "catalogs.json" cannot take its place):
/// the bundle it belongs to, and
/// the validators and version of the catalog last accepted from it. It lets
/// `--offline` and the commands that need no network find the kept catalog,
/// and lets the others revalidate it with a conditional request. It decides
/// nothing about trust: the kept catalog it leads to is checked again on
/// every use. Unreadable, it is an error naming the file (state fails
/// closed), never an empty index.
struct CatalogIndex {
  /// One location's record.
  struct Entry: Codable, Equatable {
    var bundle: String
    /// The version of the catalog these validators belong to.
    var version: Int?
    var validators: CacheValidators?
  }

  /// The file's contents: location → entry (the first format mapped
  /// location → bundle).
  struct Entries: Codable {
    var entries: [String: Entry]

    init(from decoder: any Decoder) throws {
      let container = try decoder.singleValueContainer()
      // the current layout, else the first one (decoding it reports the error)
      if let entries = dropping(.isTheAnswer, { try container.decode([String: Entry].self) }) {
        self.entries = entries
      } else {
        entries = try container.decode([String: String].self).mapValues { Entry(bundle: $0) }
      }
    }

    init(entries: [String: Entry] = [:]) { self.entries = entries }

    func encode(to encoder: any Encoder) throws {
      var container = encoder.singleValueContainer()
      try container.encode(entries)
    }
  }

  let file: StateFile<Entries>

  init(cacheHome: URL?) {
    let url = (cacheHome ?? LocalStore.defaultCacheHome()).appending(path: "odr/_catalogs.json")
    file = StateFile(url: url, what: "the index of catalog locations", reset: "remove it (odr finds every catalog again at its next online load)")
  }

  func entry(for location: URL) throws -> Entry? {
    try file.read()?.entries[location.redacted]
  }

  /// Records what was accepted from `location`, under the file's lock, so
  /// that concurrent processes never lose each other's entries.
  func remember(_ location: URL, _ entry: Entry) async throws {
    guard try self.entry(for: location) != entry else { return }
    try await file.update { index in
      index = index ?? Entries()
      index!.entries[location.redacted] = entry
    }
  }
}
