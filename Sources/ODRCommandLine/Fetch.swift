import ArgumentParser
import ODRKeyring
import ODRKeys
import ODRCatalog
import ODRResources

extension ODR {
  /// `odr fetch TAG…`: import the keys of secrets tags into the keyring.
  struct Fetch: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "fetch",
      abstract: "Fetch tags; import the API keys of secrets tags into the keyring.",
      discussion: """
        Downloads and verifies the catalog (signature, version, expiry) and the tags, decrypts each APIKeys document of the secrets tags in memory with this machine's identities (`odr identity`, ODR_IDENTITY or --identity-file), validates them all before anything is written, and writes only the keys whose value or metadata changed. No plaintext of a secrets tag is ever written to disk. If a write fails, the keys written so far are put back. Prints key names and what happened to each, never values. The keyring service is --service, else $ODR_SERVICE, else the catalog's bundle. A machine that is not a recipient of the pack exits 10.

        Example:
          odr fetch APIKeys --catalog /srv/odr
          odr fetch APIKeys --prune --json
        """
    )

    @OptionGroup var catalog: CatalogOptions

    @OptionGroup var keyring: StoreOptions

    @OptionGroup var lifetime: KernelLifetimeOption

    @OptionGroup var identity: IdentityOptions

    @Argument(help: "The tags to fetch.", completion: Completions.tags)
    var tags: [String]

    @Flag(help: "Delete keys that an earlier `odr fetch` imported and the documents no longer hold (never keys stored by `odr set` or other tools).")
    var prune = false

    @Flag(help: "Change nothing: say what would be added, changed, kept and pruned.")
    var dryRun = false

    @OptionGroup var reporting: OutputOptions

    func validate() throws {
      if tags.isEmpty { throw ValidationError("Name at least one tag, for example APIKeys.") }
    }

    func run(_ context: CommandContext) async throws {
      let resources = try await catalog.load(context, keyringTimeout: keyring.timeout)
      let store = try lifetime.applied(to: keyring.makeStore(context, defaultService: resources.catalog.bundle))
      let bar = ProgressBar(tags: tags, quiet: !reporting.isForPeople, context)
      defer { bar.finish() }
      let report: ImportReport
      do {
        report = try await KeyImporter(catalog: resources, store: store, identities: identity.source(keyring, context),
                                   keyService: IdentityOptions.keyService(context))
          .fetch(tags: tags, prune: prune, dryRun: dryRun, progress: bar.observer)
      } catch {
        throw IdentityOptions.explained(error, context)
      }
      bar.finish()
      if lifetime.ttl != nil, !dryRun, let kernel = store as? KernelKeyringStore {
        try kernel.renew(report.keys.filter { $0.outcome == .unchanged }.map(\.name))
      }
      try reporting.print(report, on: context.output) {
        if report.keys.isEmpty {
          context.output.error("\(tags.joined(separator: ", ")): available (no secrets)")
        } else {
          let prefix = dryRun ? "would be " : ""
          context.output.write(report.keys.map { entry in
            let outcome = prefix + entry.outcome.rawValue
            return outcome + String(repeating: " ", count: max(1, prefix.count + 10 - outcome.count)) + entry.name + "\n"
          }.joined())
          context.output.error(dryRun ? "dry run: nothing was written to \(report.service)" : "keys of \(report.service) are in \(store.kind.phrase); no plaintext was written to disk")
        }
      }
    }
  }
}
