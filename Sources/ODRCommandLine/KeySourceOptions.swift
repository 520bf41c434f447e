import ArgumentParser
import ODRBase
import ODRExec
import ODRConfiguration
import ODRKeyring
import ODRKeys
import ODRKeyFormat
import ODRCatalog
import ODRResources

/// Where `odr exec` and `odr env` take the keys from: the keyring, or with
/// `--fetch TAG` straight from the pack into memory.
struct KeySourceOptions: ParsableArguments {
  @OptionGroup var catalog: CatalogOptions

  @OptionGroup var keyring: StoreOptions

  @OptionGroup var identity: IdentityOptions

  @Option(name: .long, parsing: .singleValue, help: ArgumentHelp("Only these keys (comma-separated, repeatable).", valueName: "names"))
  var only: [String] = []

  @Option(name: .long, help: ArgumentHelp("Read the keys of TAG from the catalog into memory instead of the keyring; nothing is written to disk.", valueName: "tag"))
  var fetch: String?

  /// The names given with --only, or nil for every key.
  var onlyNames: [String]? {
    let names = only.flatMap { $0.split(separator: ",").map(String.init) }.filter { !$0.isEmpty }
    return names.isEmpty ? nil : names
  }

  /// The variables to inject.
  /// The variables to inject; a warning on stderr for each key left out.
  func variables(_ context: CommandContext, keys given: [APIKey]? = nil) async throws -> SecretVariables {
    let all: [APIKey]
    if let given { all = given } else { all = try await keys(context) }
    let variables = try SecretVariables(keys: all, only: onlyNames)
    for warning in variables.skipped { context.output.error(warning) }
    return variables
  }

  /// The values of `references`: one keyring search per service, or with
  /// --fetch the pack's keys in memory (its bundle is the only service).
  /// The current service is --service, else $ODR_SERVICE, else the
  /// catalog's bundle when a catalog is configured.
  func resolve(_ references: [SecretReference], in context: CommandContext, place: (SecretReference) -> String) async throws -> [SecretReference: String] {
    if let tag = fetch {
      let (bundle, keys) = try await fetched(tag, context)
      return try await SecretReference.resolve(references, defaultService: bundle, keys: { service in
        guard service == bundle else {
          throw ExecError(.notFound, "--fetch \(tag) holds the keys of \(bundle) only, not of \(service).")
        }
        return keys
      }, place: place)
    }
    var current = keyring.service ?? context.variable("ODR_SERVICE")
    if current == nil, references.contains(where: { $0.service == nil }) {
      // no catalog on disk: no default service, and a reference without one says so
      current = await droppingAsync(.isTheAnswer) { try await catalog.loadFromDisk(context).catalog.bundle }
    }
    return try await SecretReference.resolve(references, defaultService: current, keys: { service in
      try await keyring.makeStore(service: service, context).keys()
    }, place: place)
  }

  func keys(_ context: CommandContext) async throws -> [APIKey] {
    if let tag = fetch { return try await fetched(tag, context).keys }
    return try await keyring.makeStore(bundleOf: catalog, context).keys()
  }

  /// The keys of `tag`'s pack, decrypted in memory, and their bundle.
  private func fetched(_ tag: String, _ context: CommandContext) async throws -> (bundle: String, keys: [APIKey]) {
    let resources = try await catalog.load(context, keyringTimeout: keyring.timeout)
    return (resources.catalog.bundle, try await keysInMemory(tag, resources, context))
  }

  private func keysInMemory(_ tag: String, _ resources: ResourceCatalog, _ context: CommandContext) async throws -> [APIKey] {
    do {
      return try await KeyImporter(catalog: resources, store: MemoryStore(service: resources.catalog.bundle),
                                   identities: identity.source(keyring, context),
                                   keyService: IdentityOptions.keyService(context)).keysInMemory(tags: [tag])
    } catch {
      throw IdentityOptions.explained(error, context)
    }
  }

  /// The keys again, for `odr exec --watch`: with --fetch, the catalog is
  /// revalidated (a conditional request over http and s3; a folder's
  /// catalog is read, its bytes compared) and the pack read only when the
  /// tag's entry differs from `since` (nil keys: unchanged); otherwise the
  /// keyring is read. Returns the tag's entry to compare with next time.
  func revalidated(since: Catalog.Tag?, _ context: CommandContext) async throws -> (entry: Catalog.Tag?, keys: [APIKey]?) {
    guard let tag = fetch else { return (nil, try await keys(context)) }
    let resources = try await catalog.load(context, keyringTimeout: keyring.timeout)
    let entry = resources.catalog.tags[tag]
    if let since, entry == since { return (entry, nil) }
    return (entry, try await keysInMemory(tag, resources, context))
  }
}
