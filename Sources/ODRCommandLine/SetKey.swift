import ArgumentParser
import FoundationEssentials
import ODRConfiguration
import ODRKeyring

extension ODR {
  /// `odr set NAME`: stores a key whose value comes from stdin.
  struct SetKey: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "set",
      abstract: "Store a key; the value is read from standard input, never from arguments.",
      discussion: """
        On a terminal odr prompts without echo. From a pipe it reads to end of file and drops one trailing newline (pass --keep-newline to store it). An existing value is replaced; the item stays the one `secret-tool` sees.

        With --catalog-token-for ORIGIN (repeatable), the item is marked as the token odr.json "auth" may send to that origin (https://host[:port]); odr sends no other keyring item to a catalog host.

        Example:
          printf '%s' "$WEATHER_KEY" | odr set Weather --service com.example.demo
          odr set Token --catalog-token-for https://cdn.example.com < token.txt
        """
    )

    @OptionGroup var options: StoreOptions

    @Argument(help: "The key name ([A-Za-z][A-Za-z0-9_.-]{0,127}).", completion: Completions.keys)
    var name: String

    @Flag(help: "Keep a trailing newline read from a pipe.")
    var keepNewline = false

    @Option(help: ArgumentHelp("Mark the item as the catalog token odr.json \"auth\" may send to this origin (https://host[:port]); repeatable.", valueName: "origin"))
    var catalogTokenFor: [String] = []

    @Flag(name: .shortAndLong, help: "Print nothing on success.")
    var quiet = false

    /// A value given as an argument, refused with where it goes instead.
    @Argument(help: .hidden)
    var value: [String] = []

    func validate() throws {
      if !value.isEmpty {
        throw ValidationError("odr set takes the value on standard input, never as an argument (an argument shows in `ps` and in your shell's history; clear it there): printf '%s' 'VALUE' | odr set \(name), or run `odr set \(name)` and type it.")
      }
    }

    func run(_ context: CommandContext) async throws {
      let store = try await options.makeStoreOfConfiguredBundle(context)
      try KeyringInput.validate(userKeyName: name)
      let origins = try catalogTokenFor.map { text in
        guard let url = URL(string: text), let origin = CatalogAuth.origin(of: url), url.path.isEmpty || url.path == "/" else {
          throw ValidationError("--catalog-token-for takes an origin, such as https://cdn.example.com or http://127.0.0.1:8080, not '\(text.prefix(80))'.")
        }
        return origin
      }
      let value = try SecretInput.read(prompt: "Value for \(name): ", keepNewline: keepNewline, context)
      if !origins.isEmpty {
        guard let keyring = store as? SecretServiceStore else { throw ValidationError("--catalog-token-for needs the secret-service store.") }
        try await keyring.setCatalogToken(value, for: name, origins: origins)
      } else {
        try await store.setValue(value, for: name)
      }
      if !quiet { context.output.error("stored '\(name)' for \(store.service)") }
    }
  }
}
