import ArgumentParser
import FoundationEssentials
import ODRExec

extension ODR {
  /// `odr env --format shell|dotenv|json|github|gitlab [--only …]`
  struct Env: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "env",
      abstract: "Print the keys as environment variables for a shell, a dotenv file or a CI system.",
      discussion: """
        Formats: shell (export NAME='value', for eval), dotenv (NAME='value', for `set -a; . file`), json, github (appends NAME<<DELIMITER blocks to $GITHUB_ENV with a random delimiter and prints ::add-mask:: for every line of every value; --allow-unmasked leaves the masks out), github-output (the same, as the step's outputs in $GITHUB_OUTPUT), gitlab (a dotenv report; values GitLab cannot mask are refused unless --allow-unmasked). Values are printed: use it in CI steps whose output is masked, or prefer `odr exec`.

        Example:
          vars=$(odr env --service com.example.demo) && eval "$vars"
          odr env --format github --only Weather,Maps
          odr env --format gitlab > keys.env
        """
    )

    @OptionGroup var source: KeySourceOptions

    @Option(help: ArgumentHelp("How to print the variables.", valueName: "format"))
    var format: EnvFormat = .shell

    @Flag(help: "With --format gitlab: print values GitLab cannot mask in job logs. With github or github-output: print no ::add-mask:: (values that are not secret).")
    var allowUnmasked = false

    func run(_ context: CommandContext) async throws {
      var githubFile: String?
      if let variable = format.githubFileVariable {
        guard let path = context.variable(variable) else {
          throw ValidationError("--format \(format.rawValue) appends to the file named by $\(variable), which is not set. Run it in a GitHub Actions step, or set \(variable) to a file.")
        }
        githubFile = path
      }
      let rendered = try format.render(try await source.variables(context), allowUnmasked: allowUnmasked)
      context.output.write(rendered.stdout)  // github: the masks, before any value can reach a log
      if let githubFile, let block = rendered.githubEnv { try format.appendToGitHubFile(block, path: githubFile) }
    }
  }
}
