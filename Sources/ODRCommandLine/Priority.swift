import ArgumentParser
import ODRResources

extension ODR {
  /// `odr priority TAG… VALUE`
  struct Priority: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "priority",
      abstract: "Set the preservation priority of tags (0…1; lower is purged first), overriding the catalog's.",
      discussion: """
        Example:
          odr priority Level2 0.8
        """
    )

    @OptionGroup var catalog: CatalogOptions

    @Argument(help: "The tags, then the priority.")
    var arguments: [String]

    func validate() throws {
      guard arguments.count >= 2, let value = Double(arguments.last!), (0...1).contains(value) else {
        throw ValidationError("Give tags and then a priority between 0 and 1, for example: odr priority Level2 0.8")
      }
    }

    func run(_ context: CommandContext) async throws {
      let resources = try await catalog.loadFromDisk(context)
      try await resources.setPreservationPriority(Double(arguments.last!)!, forTags: Set(arguments.dropLast()))
    }
  }
}
