import ArgumentParser
import FoundationEssentials
import ODRCatalog
import ODRResources

extension ODR {
  /// `odr path TAG [FILE]`: where a tag's files are on disk.
  struct ResourcePath: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "path",
      abstract: "Print where a tag's files are on disk (after `odr begin`).",
      discussion: """
        With FILE, prints that file's local path alone. Without, prints "FILE<TAB>PATH" for each file of the tag. Files are stored content-addressed, so the local name is the SHA-256. Exit 3 when the tag is not on disk.

        Example:
          odr path Onboarding Onboarding/welcome.png --catalog /srv/odr
        """
    )

    @OptionGroup var catalog: CatalogOptions

    @Argument(help: "The tag.")
    var tag: String

    @Argument(help: "A file of the tag, as the catalog names it.")
    var file: String?

    func run(_ context: CommandContext) async throws {
      let resources = try await catalog.loadFromDisk(context)
      let request = try ResourceRequest(tags: [tag], catalog: resources)
      guard request.conditionallyBeginAccessing() else {
        throw ResourceError(.notFound, "Tag '\(tag)' is not on disk; `odr begin \(tag)` downloads it.")
      }
      defer { request.endAccessing() }
      if let file {
        context.output.write(try request.url(forResource: file).path + "\n")
      } else {
        let lines = try resources.tag(tag).files.map { "\($0.path)\t\(try request.url(forResource: $0.path).path)\n" }
        context.output.write(lines.joined())
      }
    }
  }
}
