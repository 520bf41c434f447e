import FoundationEssentials

/// What this machine remembers about each catalog location
/// (`${XDG_CACHE_HOME}/odr/catalogs.json`): the bundle it belongs to, and
/// the validators and version of the catalog last accepted from it. It lets
/// `--offline` and the commands that need no network find the kept catalog,
/// and lets the others revalidate it with a conditional request.
struct CatalogIndex {
  /// One location's record.
  struct Entry: Codable, Equatable {
    var bundle: String
    /// The version of the catalog these validators belong to.
    var version: Int?
    var validators: CacheValidators?
  }

  let file: URL

  init(cacheHome: URL?) {
    file = (cacheHome ?? LocalStore.defaultCacheHome()).appending(path: "odr/catalogs.json")
  }

  func entry(for location: URL) -> Entry? {
    entries()[location.absoluteString]
  }

  /// Records what was accepted from `location`, under a lock so that
  /// concurrent processes never lose each other's entries (best effort: the
  /// index only saves requests and serves `--offline`).
  func remember(_ location: URL, _ entry: Entry) {
    guard self.entry(for: location) != entry else { return }
    try? FileIO.makePrivateDirectory(file.deletingLastPathComponent())
    _ = try? FileIO.withLockNow(file.deletingLastPathComponent().appending(path: "catalogs.lock")) {
      var entries = entries()
      entries[location.absoluteString] = entry
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
      if let data = try? encoder.encode(entries) { try? FileIO.atomicWrite(data, to: file, mode: 0o600) }
    }
  }

  private func entries() -> [String: Entry] {
    guard let data = try? Data(contentsOf: file) else { return [:] }
    if let entries = try? JSONDecoder().decode([String: Entry].self, from: data) { return entries }
    // The first format: location → bundle.
    let bundles = (try? JSONDecoder().decode([String: String].self, from: data)) ?? [:]
    return bundles.mapValues { Entry(bundle: $0) }
  }
}
