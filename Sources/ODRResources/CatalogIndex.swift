import FoundationEssentials

/// Which bundle each catalog location belongs to, remembered when a catalog
/// is loaded (`${XDG_CACHE_HOME}/odr/catalogs.json`), so `--offline` can
/// find the store of a catalog it may not read.
struct CatalogIndex {
  let file: URL

  init(cacheHome: URL?) {
    file = (cacheHome ?? LocalStore.defaultCacheHome()).appending(path: "odr/catalogs.json")
  }

  func bundle(for location: URL) -> String? {
    entries()[location.absoluteString]
  }

  /// Records `location` → `bundle` (best effort: the index only helps `--offline`).
  func remember(_ location: URL, bundle: String) {
    var entries = entries()
    guard entries[location.absoluteString] != bundle else { return }
    entries[location.absoluteString] = bundle
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
    if let data = try? encoder.encode(entries) { try? FileIO.atomicWrite(data, to: file, mode: 0o600) }
  }

  private func entries() -> [String: String] {
    guard let data = try? Data(contentsOf: file) else { return [:] }
    return (try? JSONDecoder().decode([String: String].self, from: data)) ?? [:]
  }
}
