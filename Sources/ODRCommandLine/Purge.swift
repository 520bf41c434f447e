import ArgumentParser
import ODRCatalog
import ODRResources

extension ODR {
  /// `odr purge [--all] [--dry-run] [--max-size SIZE]`
  struct Purge: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "purge",
      abstract: "Remove unpinned tags from the local store, lowest preservation priority and least recently used first.",
      discussion: """
        Without --all, removes tags until the store fits its budget (--max-size or $ODR_MAX_SIZE). Files no tag of the catalog uses go first; pinned tags are never removed. --dry-run says what would go and why, and changes nothing.

        Example:
          odr purge --max-size 200M --dry-run
          odr purge --all
        """
    )

    @OptionGroup var catalog: CatalogOptions

    @Flag(help: "Remove every unpinned tag.")
    var all = false

    @Flag(name: .customLong("dry-run"), help: "Explain what would be removed; remove nothing.")
    var dryRun = false

    @OptionGroup var reporting: OutputOptions

    func run(_ context: CommandContext) async throws {
      let resources = try await catalog.loadFromDisk(context)
      guard all || resources.budget != nil else {
        throw ValidationError("Nothing to purge down to: pass --max-size SIZE (or set ODR_MAX_SIZE), or --all to remove every unpinned tag.")
      }
      let plan = try await resources.store.purge(catalog: resources.catalog, budget: resources.budget, all: all, dryRun: dryRun)
      try reporting.print(plan, on: context.output) {
        let verb = dryRun ? "would remove" : "removed"
        var lines = plan.removals.map { "\(verb) \($0.tag) (\(ByteSize.format($0.bytes))): \($0.reason)" }
        lines += plan.kept.map { "kept \($0.tag): \($0.reason)" }
        lines.append("store: \(ByteSize.format(plan.sizeBefore)) -> \(ByteSize.format(plan.sizeAfter))\(plan.budget.map { " (budget \(ByteSize.format($0)))" } ?? "")")
        context.output.write(lines.joined(separator: "\n") + "\n")
      }
    }
  }
}
