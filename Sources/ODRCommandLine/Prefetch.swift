import ODRBase
import ArgumentParser
import ODRCatalog
import ODRKeyring
import ODRKeys
import ODRResources

extension ODR {
  /// `odr prefetch [--parallel N] [--json]`
  struct Prefetch: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "prefetch",
      abstract: "Download every initial tag, then the prefetch tags in their order, several at a time.",
      discussion: """
        As the App Store does after an install. Downloads run in parallel (--parallel, default 6, as browsers use per host), started in order; one failure does not stop the others. Prefetched tags are not pinned. Secrets tags among them are imported into the keyring, as `odr fetch` does (an app's first launch); with no keyring here they are skipped with a note. Prints what succeeded and what failed and why; exits with the first failure's code.

        Example:
          odr prefetch --catalog https://cdn.example.com/odr
          odr prefetch --parallel 8 --json
        """
    )

    @OptionGroup var catalog: CatalogOptions

    @OptionGroup var keyring: StoreOptions

    @OptionGroup var identity: IdentityOptions

    @Option(help: ArgumentHelp("Downloads at a time (1–32).", valueName: "n"))
    var parallel = 6

    @OptionGroup var reporting: OutputOptions

    func validate() throws {
      guard (1...32).contains(parallel) else { throw ValidationError("--parallel must be between 1 and 32.") }
    }

    func run(_ context: CommandContext) async throws {
      let resources = try await catalog.load(context)
      let order = resources.prefetchOrder
      let secrets = order.filter { resources.catalog.tags[$0]?.secrets == true }
      let files = await resources.prefetch(order.filter { !secrets.contains($0) }, parallel: parallel)
      var entries = files.entries
      var firstError: (any Error)?
      for name in secrets {
        let (entry, error) = await importKeys(of: name, resources, context)
        entries.append(entry)
        firstError = firstError ?? error
      }
      let report = PrefetchReport(entries: entries)
      try reporting.print(report, failed: report.firstFailure != nil, on: context.output) {
        let lines = report.entries.map { entry in
          let what = switch entry.outcome {
          case .downloaded: "downloaded"
          case .alreadyOnDisk: "on disk   "
          case .failed: "FAILED    "
          case .imported: "imported  "
          case .skipped: "skipped   "
          }
          return "\(what) \(entry.tag) (\(entry.category), \(ByteSize.format(entry.bytes)))\(entry.error.map { ": \($0)" } ?? "")"
        }
        context.output.write(lines.joined(separator: "\n") + (lines.isEmpty ? "" : "\n"))
      }
      if let failure = report.firstFailure {
        if files.firstFailure == nil, let firstError { throw firstError }
        let failed = report.entries.filter { $0.outcome == .failed }.count
        throw ResourceError(failure.code ?? .network,
                            "\(failed) of \(report.entries.count) tags failed; the first: \(failure.tag): \(failure.error ?? "")")
      }
    }

    /// Imports a secrets tag's keys into the keyring; no keyring: skipped.
    private func importKeys(of name: String, _ resources: ResourceCatalog, _ context: CommandContext) async -> (PrefetchReport.Entry, (any Error)?) {
      let tag = resources.catalog.tags[name]
      let (category, bytes) = (tag?.category.rawValue ?? "", tag?.size ?? 0)
      do {
        if try keyring.store ?? StoreOptions.configuredKind(context) == .secretService, let failure = await SecretServiceStore.probe(deadline: StoreOptions.deadline(seconds: keyring.timeout)).failure {
          throw failure
        }
        let store = try keyring.makeStore(context, defaultService: resources.catalog.bundle)
        let importer = KeyImporter(catalog: resources, store: store, identities: identity.source(keyring, context),
                                   keyService: IdentityOptions.keyService(context))
        _ = try await importer.fetch(tags: [name])
        return (.init(tag: name, category: category, outcome: .imported, bytes: bytes, error: nil, code: nil), nil)
      } catch let error as KeyringError where [.noLibrary, .noSessionBus, .noProvider, .noDefaultCollection].contains(error.code) {
        let note = "no keyring here, so its keys were not imported (`odr fetch \(name)` where a keyring runs, or `odr exec --fetch \(name) -- CMD`)"
        return (.init(tag: name, category: category, outcome: .skipped, bytes: bytes, error: note, code: nil), nil)
      } catch {
        return (.init(tag: name, category: category, outcome: .failed, bytes: bytes, error: "\(error)", code: (error as? ResourceError)?.code), error)
      }
    }
  }
}
