import ODRBase
import ArgumentParser
import FoundationEssentials
import ODRConfiguration
import ODRKeyring
import ODRKeys
import ODRKeyFormat

extension ODR {
  /// `odr set NAME`: stores a key whose value comes from stdin.
  struct SetKey: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "set",
      abstract: "Store a key; the value is read from standard input, never from arguments.",
      discussion: """
        On a terminal odr prompts without echo. From a pipe it reads to end of file and drops one trailing newline (pass --keep-newline to store it). An existing value is replaced; the item stays the one `secret-tool` sees.

        With --catalog-token-for ORIGIN (repeatable), the item is marked as the token odr.json "auth" may send to that origin (https://host[:port]); odr sends no other keyring item to a catalog host.

        With --host (repeatable) and where the key goes — --header NAME (with --scheme, or as "Name: Scheme"; repeatable), --query NAME, or --basic (the password of Basic authentication, for --basic-user USER or any user) — the key gets the metadata a catalog's APIKeys document would give it, marked as set by you: `odr exec --proxy` sends it there, `odr http` and the library's APIClient too, and `odr list --long` shows it. It never replaces a catalog key's metadata without --force. A host may name a port (localhost:8080), or start with a dot for every name under a domain (.amazonaws.com); plain http goes only to loopback ports a host names. An AWS credential (keys whose variables are AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, and AWS_SESSION_TOKEN) takes --host only: the proxy re-signs what the command signed with its placeholders.

        Example:
          printf '%s' "$WEATHER_KEY" | odr set Weather --service com.example.demo
          odr set Token --catalog-token-for https://cdn.example.com < token.txt
          odr set OpenAI --host api.openai.com --header 'Authorization: Bearer' < key
          odr set GitHub --host github.com --basic --basic-user x-access-token < tok
        """
    )

    @OptionGroup var options: StoreOptions
    @OptionGroup var lifetime: KernelLifetimeOption

    @Argument(help: "The key name ([A-Za-z][A-Za-z0-9_.-]{0,127}).", completion: Completions.keys)
    var name: String

    @Flag(help: "Keep a trailing newline read from a pipe.")
    var keepNewline = false

    @Option(help: ArgumentHelp("Mark the item as the catalog token odr.json \"auth\" may send to this origin (https://host[:port]); repeatable.", valueName: "origin"))
    var catalogTokenFor: [String] = []

    @Option(help: ArgumentHelp("A host the key may be sent to (api.example.com, localhost:8080, .amazonaws.com for every name under it); repeatable.", valueName: "host"))
    var host: [String] = []

    @Option(help: ArgumentHelp("A header the key goes in (X-Api-Key, or \"Authorization: Bearer\"); repeatable.", valueName: "name"))
    var header: [String] = []

    @Option(help: ArgumentHelp("The scheme before the key in --header (Bearer).", valueName: "scheme"))
    var scheme: String?

    @Option(help: ArgumentHelp("The query parameter the key goes in.", valueName: "name"))
    var query: String?

    @Flag(help: "The key is the password of Basic authentication (git with the token in its URL, curl -u).")
    var basic = false

    @Option(name: .customLong("basic-user"), help: ArgumentHelp("With --basic: the one user it goes with (default: any).", valueName: "user"))
    var basicUser: String?

    @Option(help: ArgumentHelp("The environment variable odr exec gives the key in (default: its name in upper snake case).", valueName: "name"))
    var env: String?

    @Flag(help: "Replace metadata the key's catalog gave it.")
    var force = false

    @Flag(name: .shortAndLong, help: "Print nothing on success.")
    var quiet = false

    /// A value given as an argument, refused with where it goes instead.
    @Argument(help: .hidden)
    var value: [String] = []

    /// The metadata the options give, checked as an APIKeys document's is; nil without any.
    func metadata() throws -> KeyMetadata? {
      let places = !header.isEmpty || query != nil || basic
      guard places || !host.isEmpty || scheme != nil || basicUser != nil || env != nil || force else { return nil }
      // An AWS credential's keys go nowhere themselves: the proxy signs with them.
      let signing = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"].contains(env ?? VariableName.upperSnakeCase(name))
      guard !host.isEmpty, places || signing else {
        throw ValidationError("A key's metadata names its hosts (--host) and where it goes: --header, --query or --basic (an AWS credential's keys, whose variables are AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, only --host).")
      }
      var entry = Entry(hosts: host)
      if header.count == 1, !header[0].contains(":") { entry.header = header[0] } else if !header.isEmpty { entry.headers = header }
      if let scheme {
        guard header.count == 1, !header[0].contains(":") else { throw ValidationError("--scheme goes with one --header NAME; write several as \"Name: Scheme\".") }
        entry.scheme = scheme
      }
      entry.query = query
      if basic { entry.basic = basicUser.map(Entry.Basic.user) ?? .any } else if basicUser != nil { throw ValidationError("--basic-user goes with --basic.") }
      entry.env = env
      // The same checks as a catalog's document: its reader reads these.
      let json = try JSONEncoder().encode(["keys": [name: entry]])
      do {
        return try APIKeysDocument.parse(json)[name]?.metadata
      } catch {
        var message = Substring(error.message)
        if message.hasPrefix("Invalid APIKeys document: ") { message = message.dropFirst("Invalid APIKeys document: ".count) }
        if message.hasSuffix(" Nothing was imported.") { message = message.dropLast(" Nothing was imported.".count) }
        throw ValidationError(String(message))
      }
    }

    /// A key's entry of an APIKeys document, as the options give it.
    struct Entry: Encodable {
      enum Basic: Encodable {
        case any
        case user(String)

        func encode(to encoder: any Encoder) throws {
          var container = encoder.singleValueContainer()
          switch self {
          case .any: try container.encode(true)
          case .user(let user): try container.encode(user)
          }
        }
      }

      var value = "x"
      var hosts: [String]
      var header: String?
      var headers: [String]?
      var scheme: String?
      var query: String?
      var basic: Basic?
      var env: String?
    }

    func validate() throws {
      if !value.isEmpty {
        throw ValidationError("odr set takes the value on standard input, never as an argument (an argument shows in `ps` and in your shell's history; clear it there): printf '%s' 'VALUE' | odr set \(name), or run `odr set \(name)` and type it.")
      }
    }

    func run(_ context: CommandContext) async throws {
      let store = try lifetime.applied(to: await options.makeStoreOfConfiguredBundle(context))
      try KeyringInput.validate(userKeyName: name)
      let origins = try catalogTokenFor.map { text in
        guard let url = URL(string: text), let origin = CatalogAuth.origin(of: url), url.path.isEmpty || url.path == "/" else {
          throw ValidationError("--catalog-token-for takes an origin, such as https://cdn.example.com or http://127.0.0.1:8080, not '\(text.prefix(80))'.")
        }
        return origin
      }
      let metadata = try metadata()
      if metadata != nil && !origins.isEmpty { throw ValidationError("--catalog-token-for does not go with a key's hosts: a catalog token goes to its catalog's origin.") }
      let value = try SecretInput.read(prompt: "Value for \(name): ", keepNewline: keepNewline, context)
      if let metadata {
        try await store.setKey(value, for: name, metadata: metadata, force: force)
      } else if !origins.isEmpty {
        guard let keyring = store as? SecretServiceStore else { throw ValidationError("--catalog-token-for needs the secret-service store.") }
        try await keyring.setCatalogToken(value, for: name, origins: origins)
      } else {
        try await store.setValue(value, for: name)
      }
      if !quiet { context.output.error("stored '\(name)' for \(store.service)") }
    }
  }
}
