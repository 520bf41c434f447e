import ArgumentParser
import FoundationEssentials
import ODRBase
import ODRCatalog
import ODRConfiguration
import ODRKeyring
import ODRResources

/// Shell completion of the names odr knows — keys, tags, identities and
/// signing keys — answered from the keyring and the catalogs on disk, never
/// the network, each within a second. Synchronous (parseAsRoot runs only
/// synchronous completions), on the main thread: CommandLineTool.runHotPath
/// answers completion requests before the concurrency runtime starts.
enum Completions {
  /// How long one keyring read may take while the shell waits.
  static let deadline = Duration.seconds(1)

  /// The context a completion request runs in: the shell's `odr ---completion`
  /// process (completion callbacks are ArgumentParser's, called while parsing).
  private static let context = CommandContext.process(network: .unavailable)

  /// The keys of the service named on the command line (`--service S`),
  /// else `$ODR_SERVICE`, else the bundle of the catalog on disk.
  static let keys = CompletionKind.custom { words, _, prefix in
    let catalogBundle = { () -> String? in tagCatalogs(words).first?.bundle }
    // odr's own services (private keys) are fenced here as in the key
    // commands, whatever a catalog on disk names as its bundle.
    guard let service = value(of: "--service", in: words) ?? context.variable("ODR_SERVICE") ?? catalogBundle(),
          // completion never fails loudly: an invalid service offers no names
          (dropping(.isTheAnswer) { try KeyringInput.validate(keyService: service) }) != nil
    else { return [] }
    return names(in: service, startingWith: prefix)
  }

  /// The tags of the catalogs of `--catalog`, `$ODR_CATALOG` or odr.json:
  /// a folder's catalog.json, or the copy kept from the last online load.
  static let tags = CompletionKind.custom { words, _, prefix in
    // Catalog.decode already refuses tags outside the tag rules.
    Set(tagCatalogs(words).flatMap(\.tags.keys)).filter { $0.hasPrefix(prefix) }.sorted()
  }

  /// The names of the private keys kept under `service` (`odr.identity`,
  /// `odr.signing-key`).
  static func privateKeys(service: String) -> CompletionKind {
    .custom { _, _, prefix in names(in: service, startingWith: prefix) }
  }

  /// The names kept under `service` that start with `prefix`; none when the
  /// keyring does not answer within the deadline (completion never fails loudly).
  private static func names(in service: String, startingWith prefix: String) -> [String] {
    // completion never fails loudly: a silent keyring offers no names
    guard let store = dropping(.bestEffort, { try context.keyring(service, deadline) as? SecretServiceStore }),
          let names = dropping(.isTheAnswer, { try store.namesBlocking() })
    else { return [] }
    return offerable(names, startingWith: prefix)
  }

  /// The names a shell may be offered: those that start with `prefix` and
  /// follow odr's name rules. Another program may store any name in the
  /// keyring, and bash's `compgen -W` expands the words it is given, so a
  /// name holding `$(…)`, a backtick or a space is never offered.
  static func offerable(_ names: [String], startingWith prefix: String) -> [String] {
    names.filter { name in
      // a name outside odr's rules is simply not offered
      name.hasPrefix(prefix) && (dropping(.isTheAnswer) { try KeyringInput.validate(userKeyName: name) }) != nil
    }
  }

  /// The value after `option` among the words typed so far.
  static func value(of option: String, in words: [String]) -> String? {
    guard let index = words.lastIndex(of: option), words.indices.contains(index + 1) else { return nil }
    return words[index + 1]
  }

  /// The catalogs the command line points at, as far as the disk knows them.
  private static func tagCatalogs(_ words: [String]) -> [Catalog] {
    let typed = words.indices.filter { words[$0] == "--catalog" && words.indices.contains($0 + 1) }.map { words[$0 + 1] }
    // Completion must not fail loudly: no configuration, no names.
    guard let configuration = dropping(.isTheAnswer, { try CatalogOptions.discover(context, .init(catalog: typed)) }),
          // completion never fails loudly: no catalog, no tags
          let locations = dropping(.bestEffort, { try configuration.requireLocations() })
    else { return [] }
    return locations.compactMap { location in
      if location.isFileURL {
        let file = location.hasDirectoryPath || !location.path.hasSuffix(".json") ? location.appending(path: "catalog.json") : location
        // An unreadable or foreign file offers no tags.
        return (dropping(.isTheAnswer) { try Data(contentsOf: file) }).flatMap { data in dropping(.isTheAnswer) { try Catalog.decode(data) } }
      }
      // Nothing kept yet: no tags until the first online load.
      return (dropping(.isTheAnswer) { try ResourceCatalog.loadKept(from: location, cacheHome: configuration.folders.cacheHome) })?.catalog
    }
  }
}
