import ODRKeyFormat
import ArgumentParser
import ODRCatalog
import ODRKeyring
import ODRKeys

extension ODR {
  /// `odr list`: the key names of a service, never their values.
  struct ListKeys: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "list",
      abstract: "List the names of the stored keys (never their values).",
      discussion: """
        --json prints {"service": …, "keys": [names]}; with --long, each key is an object of its name and metadata, every field present (null when unset).

        Example:
          odr list --service com.example.demo
          odr list --service com.example.demo --json
          odr list --service com.example.demo --long
        """
    )

    @Flag(name: .shortAndLong, help: "Show each key's metadata (variable, header, query, hosts) too; never its value.")
    var long = false

    @OptionGroup var options: StoreOptions

    @OptionGroup var reporting: OutputOptions

    struct Listing: Encodable {
      let service: String
      let keys: [String]
    }

    /// `--long --json`: each key with its metadata, every field present.
    struct LongListing: Encodable {
      struct Key: Encodable {
        let name: String
        @NullWhenAbsent var env: String?
        @NullWhenAbsent var header: String?
        @NullWhenAbsent var scheme: String?
        @NullWhenAbsent var query: String?
        @NullWhenAbsent var hosts: [String]?
        @NullWhenAbsent var insecure: Bool?
        /// More headers it may go in (`Name` or `Name: Scheme`).
        @NullWhenAbsent var headers: [String]?
        /// Basic authentication: its user, or "" for any.
        @NullWhenAbsent var basic: String?
        /// "you" for metadata set with `odr set --host`, "catalog" for a fetched key's, null for none.
        @NullWhenAbsent var metadataFrom: String?
      }
      let service: String
      let keys: [Key]
    }

    func run(_ context: CommandContext) async throws {
      let store = try await options.makeStoreOfConfiguredBundle(context)
      if long {
        let keys = try await store.keys().map { key in
          LongListing.Key(name: key.name, env: key.metadata.env, header: key.metadata.header, scheme: key.metadata.scheme,
                          query: key.metadata.query, hosts: key.metadata.hosts, insecure: key.metadata.insecure, headers: key.metadata.headers,
                          basic: key.metadata.basic, metadataFrom: key.metadata.setByUser == true ? "you" : key.metadata.isEmpty ? nil : "catalog")
        }
        return try reporting.print(LongListing(service: store.service, keys: keys), on: context.output) {
          var table = TextTable(header: ["NAME", "ENV", "HEADER", "SCHEME", "QUERY", "BASIC", "HOSTS", "INSECURE", "FROM"])
          table.rows = keys.map { key in
            [key.name, key.env ?? "-", ([key.header].compactMap { $0 } + (key.headers ?? [])).joined(separator: ",").nonEmpty ?? "-", key.scheme ?? "-",
             key.query ?? "-", key.basic.map { $0.isEmpty ? "any user" : $0 } ?? "-", key.hosts?.joined(separator: ",") ?? "-",
             key.insecure.map(String.init) ?? "-", key.metadataFrom ?? "-"]
          }
          // No keys: the note alone, not a header over nothing.
          if keys.isEmpty { return Self.sayEmpty(store, context) }
          table.write(to: context.output)
        }
      }
      let names = try await store.names()
      try reporting.print(Listing(service: store.service, keys: names), on: context.output) {
        context.output.write(names.map { $0 + "\n" }.joined())
        if names.isEmpty { Self.sayEmpty(store, context) }
      }
    }

    /// Says on stderr that the service holds no keys: stdout (a pipe's
    /// lines) stays empty either way.
    static func sayEmpty(_ store: any SecretStore, _ context: CommandContext) {
      context.output.error("no keys in \(store.service) in \(store.kind.phrase) (`odr fetch` imports them; `odr set NAME` stores one)")
    }
  }
}

extension String {
  /// nil for "", else the string.
  fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}
