import ArgumentParser
import ODRKeyring
import ODRKeys

extension ODR {
  /// `odr get NAME`: prints one key's value.
  struct GetKey: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "get",
      abstract: "Print a key's value, and nothing else.",
      discussion: """
        The value is printed exactly; a newline follows only when stdout is a terminal (as with `secret-tool lookup`). Exit code 3 when the key does not exist. To send a key to an API, use `odr http --key` or `odr exec`: `$(odr get …)` inside another command line puts the value in that command's argv, where other users' `ps` can read it.

        Example:
          odr get Weather --service com.example.demo
          odr get Weather --service com.example.demo --out-file weather.key
          odr http https://api.example.com/v1 --key Weather --service com.example.demo
        """
    )

    @OptionGroup var options: StoreOptions

    @Argument(help: "The key name.", completion: Completions.keys)
    var name: String

    @Option(help: ArgumentHelp("Write the value to this file (mode 0600, written atomically) instead of standard output.", valueName: "file"), completion: .file())
    var outFile: String?

    @Flag(help: "Replace --out-file if it exists.")
    var force = false

    func run(_ context: CommandContext) async throws {
      try KeyringInput.validate(userKeyName: name)
      let value = try await options.makeStoreOfConfiguredBundle(context).keyValue(named: name)
      if let outFile { return try SecretFile.write(value, to: context.path(outFile), force: force) }
      Self.print(value, to: context.output)
    }

    /// Prints a value exactly, with a newline only for a terminal.
    static func print(_ value: String, to output: Output) {
      output.write(output.stdoutIsTerminal ? value + "\n" : value)
    }
  }
}
