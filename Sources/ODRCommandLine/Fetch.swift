import ArgumentParser
import ODRKeys
import ODRResources

extension ODR {
  /// `odr fetch TAG…`: import the keys of secrets tags into the keyring.
  struct Fetch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Fetch tags; import the API keys of secrets tags into the keyring and delete the plaintext.",
      discussion: """
        Downloads and verifies the tags, parses every APIKeys document of the secrets tags
        (all must be valid before anything is written), writes only the keys whose value or
        metadata changed, then deletes the plaintext from disk. If a write fails, the keys
        written so far are put back. Prints key names and what happened to each, never values.
        The keyring service is --service, else $ODR_SERVICE, else the catalog's bundle.

        Example:
          odr fetch APIKeys --catalog /srv/odr
          odr fetch APIKeys --prune --json
        """
    )

    @OptionGroup var catalog: CatalogOptions

    @OptionGroup var keyring: StoreOptions

    @Argument(help: "The tags to fetch.")
    var tags: [String]

    @Flag(help: "Delete keys of the service that the documents no longer hold.")
    var prune = false

    @Flag(help: "Print the outcome as JSON.")
    var json = false

    @Flag(name: .shortAndLong, help: "Print nothing on success.")
    var quiet = false

    func validate() throws {
      if tags.isEmpty { throw ValidationError("Name at least one tag, for example APIKeys.") }
    }

    func run() async throws {
      let resources = try await catalog.load()
      let store = try keyring.makeStore(defaultService: resources.catalog.bundle)
      let bar = ProgressBar(quiet: quiet || json)
      let report = try await KeyImporter(catalog: resources, store: store).fetch(tags: tags, prune: prune, progress: bar.callback)
      bar.finish()
      if json { return try Output.json(report) }
      guard !quiet else { return }
      if report.keys.isEmpty {
        Output.error("\(tags.joined(separator: ", ")): available (no secrets)")
      } else {
        Output.write(report.keys.map { "\($0.outcome.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0))\($0.name)\n" }.joined())
        Output.error("keys of \(report.service) are in the keyring; plaintext removed from disk")
      }
    }
  }
}
