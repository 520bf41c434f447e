import ArgumentParser
import ODRCI

extension ODR {
  /// `odr exec [--only A,B] [--pristine] [--mask] [--fetch TAG] -- CMD…`
  struct Exec: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Run a command with the keys as environment variables (never in argv, never on disk).",
      discussion: """
        A key's variable is its "env" metadata, else its name in upper snake case (Weather ->
        WEATHER, mapsKey -> MAPS_KEY). Two keys with one variable, invalid names, and variables
        such as PATH, LD_* or BASH_ENV are refused.

        Without --mask, odr replaces itself with the command: its exit code and signals are the
        command's own. With --mask, odr runs it as a child, replaces every key value in its
        stdout and stderr (also base64 and percent-encoded forms) with ***, forwards signals
        sent to odr, and exits as the command did. Exit 127: command not found; 126: not
        executable.

        Example:
          odr exec --service com.example.demo -- ./deploy.sh
          odr exec --only Weather --mask -- curl -fsS "https://api.example/v1?key=$WEATHER"
          odr exec --fetch APIKeys --catalog https://cdn.example/odr --pristine -- make test
        """
    )

    @OptionGroup var source: KeySourceOptions

    @Flag(help: "Start the command with only the keys plus PATH, HOME, USER, LANG and TERM.")
    var pristine = false

    @Flag(help: "Mask key values in the command's stdout and stderr.")
    var mask = false

    @Argument(parsing: .postTerminator, help: ArgumentHelp("The command and its arguments, after --.", valueName: "command"))
    var commandLine: [String] = []

    func validate() throws {
      if commandLine.isEmpty { throw ValidationError("Name the command to run after --, for example: odr exec -- ./deploy.sh") }
    }

    func run() async throws {
      let variables = try await source.variables()
      let environment = CommandRunner.environment(with: variables, pristine: pristine)
      guard mask else { try CommandRunner.replaceProcess(with: commandLine, environment: environment) }
      let status = try CommandRunner.runMasked(commandLine, environment: environment, masking: variables.variables.map(\.value))
      CommandRunner.exit(likeStatus: status)
    }
  }
}
