import ODRBase
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
        With FILE, prints that file's local path alone. Without, prints "FILE<TAB>PATH" for each file of the tag (aligned under a header on a terminal; --json: a list of {file, path}). Files are stored content-addressed, so the local name is the SHA-256. Exit 3 when the tag is not on disk.

        Example:
          odr path Onboarding Onboarding/welcome.png --catalog /srv/odr
        """
    )

    @OptionGroup var catalog: CatalogOptions

    @Argument(help: "The tag.")
    var tag: String

    @Argument(help: "A file of the tag, as the catalog names it.")
    var file: String?

    @OptionGroup var reporting: OutputOptions

    /// `--json`: one file of the tag and where it is on disk.
    struct Entry: Encodable { let file: String, path: String }

    func run(_ context: CommandContext) async throws {
      let resources = try await catalog.loadFromDisk(context)
      let request = try ResourceRequest(tags: [tag], catalog: resources)
      guard request.conditionallyBeginAccessing() else {
        throw ResourceError(.notFound, "Tag '\(tag)' is not on disk; `odr begin \(tag)` downloads it.")
      }
      defer { request.endAccessing() }
      let files = try file.map { [$0] } ?? resources.tag(tag).files.map(\.path)
      let entries = try files.map { Entry(file: $0, path: try request.url(forResource: $0).path) }
      try reporting.print(entries, on: context.output) {
        if file != nil { return context.output.write(entries[0].path + "\n") }
        TextTable(header: ["FILE", "PATH"], rows: entries.map { [$0.file, $0.path] }).write(to: context.output)
      }
    }
  }
}
