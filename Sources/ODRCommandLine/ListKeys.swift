import ArgumentParser
import ODRKeyring

extension ODR {
  /// `odr list`: the key names of a service, never their values.
  struct ListKeys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "list",
      abstract: "List the names of the stored keys (never their values).",
      discussion: """
        Example:
          odr list --service com.example.demo
          odr list --service com.example.demo --json
        """
    )

    @OptionGroup var options: StoreOptions

    @Flag(help: "Print a JSON object: {\"service\": …, \"keys\": [names]}.")
    var json = false

    struct Listing: Encodable {
      let service: String
      let keys: [String]
    }

    func run() async throws {
      let store = try options.makeStore()
      let names = try await store.names()
      if json {
        try Output.json(Listing(service: store.service, keys: names))
      } else {
        Output.write(names.map { $0 + "\n" }.joined())
      }
    }
  }
}
