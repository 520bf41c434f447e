import ArgumentParser
import ODRCI
import ODRResources
import ODRTrust

/// The `odr` command: parsing, output and exit codes only; the work is done
/// by the ODR* libraries.
struct ODR: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "odr",
    abstract: "On-Demand Resources for Linux: deliver API keys into the keyring, not the binary.",
    discussion: """
      Keys live in the Secret Service keyring (gnome-keyring, KeePassXC, …), one item per key with the attributes `service` (the bundle id) and `key` (the key name).

      Example:
        printf '%s' "$WEATHER_KEY" | odr set Weather --service com.example.demo
        odr get Weather --service com.example.demo
        secret-tool lookup service com.example.demo key Weather
      """,
    version: "0.1.0",
    subcommands: [Fetch.self, Exec.self, Env.self, HTTP.self, URLCommand.self, Pack.self, Verify.self, Publish.self, Sign.self, KeyringKeyCommand<SigningKey>.self, KeyringKeyCommand<AgeIdentity>.self, Trust.self, Prefetch.self, Begin.self, End.self, ResourcePath.self, Status.self, Priority.self, Purge.self, SetKey.self, GetKey.self, ReadReference.self, Inject.self, ListKeys.self, DeleteKey.self, Doctor.self]
  )

  /// Runs the command with this executable's ``CommandContext`` and turns
  /// every failure into a message on stderr and its exit code
  /// (``ExitStatus``). `http`: what runs `odr http` in this executable,
  /// if anything.
  static func main(http: (any HTTPRunner)?) async {
    CommandRunner.recordInheritedSignals()
    let context = CommandContext(http: http)
    do {
      // `odr exec` starts every CI step: parse it alone, not the whole
      // command tree (about 2 ms less). Help and usage errors go through
      // the root below, so they read `odr exec`.
      let arguments = CommandLine.arguments.dropFirst()
      if arguments.first == "exec", let exec = try? Exec.parse(Array(arguments.dropFirst())) {
        return try await exec.run(context)
      }
      if let problem = CommandSuggestion.problem(Array(arguments), commands: configuration.subcommands.map { $0._commandName }) {
        throw ValidationError(problem)
      }
      var command = try parseAsRoot()
      if let command = command as? any ContextualCommand {
        try await command.run(context)
      } else if var command = command as? any AsyncParsableCommand {
        try await command.run()
      } else {
        try command.run()
      }
    } catch {
      ExitStatus.exit(with: error)
    }
  }
}
