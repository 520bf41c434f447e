import ArgumentParser
import ODRKeyring

extension ODR {
  /// `odr get NAME`: prints one key's value.
  struct GetKey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "get",
      abstract: "Print a key's value, and nothing else.",
      discussion: """
        The value is printed exactly; a newline follows only when stdout is a terminal
        (as with `secret-tool lookup`). Exit code 3 when the key does not exist.

        Example:
          curl -H "X-Api-Key: $(odr get Weather --service com.example.demo)" https://api.weather.example/
        """
    )

    @OptionGroup var options: StoreOptions

    @Argument(help: "The key name.")
    var name: String

    func run() async throws {
      try KeyringInput.validate(userKeyName: name)
      try await Self.print(options.makeStore().value(for: name))
    }

    /// Prints a value exactly, with a newline only for a terminal.
    static func print(_ value: String) {
      Output.write(Output.stdoutIsTerminal ? value + "\n" : value)
    }
  }
}
