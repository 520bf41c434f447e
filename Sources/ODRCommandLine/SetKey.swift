import ArgumentParser
import ODRKeyring

extension ODR {
  /// `odr set NAME`: stores a key whose value comes from stdin.
  struct SetKey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "set",
      abstract: "Store a key; the value is read from standard input, never from arguments.",
      discussion: """
        On a terminal odr prompts without echo. From a pipe it reads to end of file and drops one trailing newline (pass --keep-newline to store it). An existing value is replaced; the item stays the one `secret-tool` sees.

        Example:
          printf '%s' "$WEATHER_KEY" | odr set Weather --service com.example.demo
        """
    )

    @OptionGroup var options: StoreOptions

    @Argument(help: "The key name ([A-Za-z][A-Za-z0-9_.-]{0,127}).")
    var name: String

    @Flag(help: "Keep a trailing newline read from a pipe.")
    var keepNewline = false

    @Flag(name: .shortAndLong, help: "Print nothing on success.")
    var quiet = false

    func run() async throws {
      let store = try options.makeStore()
      try KeyringInput.validate(userKeyName: name)
      let value = try SecretInput.read(prompt: "Value for \(name): ", keepNewline: keepNewline)
      try await store.setValue(value, for: name)
      if !quiet { Output.error("stored '\(name)' for \(store.service)") }
    }
  }
}
