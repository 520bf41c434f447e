import ArgumentParser
import FoundationEssentials
import ODRCI
#if canImport(Glibc)
import Glibc
#endif

extension ODR {
  /// `odr env --format shell|dotenv|json|github|gitlab [--only …]`
  struct Env: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "env",
      abstract: "Print the keys as environment variables for a shell, a dotenv file or a CI system.",
      discussion: """
        Formats: shell (export NAME='value', for eval), dotenv (NAME='value', for `set -a; . file`), json, github (appends NAME<<DELIMITER blocks to $GITHUB_ENV with a random delimiter and prints ::add-mask:: for every line of every value), gitlab (a dotenv report; values GitLab cannot mask are refused unless --allow-unmasked). Values are printed: use it in CI steps whose output is masked, or prefer `odr exec`.

        Example:
          eval "$(odr env --service com.example.demo)"
          odr env --format github --only Weather,Maps
          odr env --format gitlab > keys.env
        """
    )

    @OptionGroup var source: KeySourceOptions

    @Option(help: ArgumentHelp("How to print the variables.", valueName: "format"))
    var format: EnvFormat = .shell

    @Flag(help: "With --format gitlab: print values GitLab cannot mask in job logs.")
    var allowUnmasked = false

    func run(_ context: CommandContext) async throws {
      var githubFile: String?
      if format == .github {
        guard let path = getenv("GITHUB_ENV").map({ String(cString: $0) }), !path.isEmpty else {
          throw ValidationError("--format github appends to the file named by $GITHUB_ENV, which is not set. Run it in a GitHub Actions step, or set GITHUB_ENV to a file.")
        }
        githubFile = path
      }
      let rendered = try format.render(try await source.variables(context), allowUnmasked: allowUnmasked)
      Output.write(rendered.stdout)  // github: the masks, before any value can reach a log
      if let githubFile, let block = rendered.githubEnv { try append(block, to: githubFile) }
    }

    /// Appends `text` to `path` in one write (O_APPEND), creating it 0600.
    private func append(_ text: String, to path: String) throws {
      let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
      guard fd >= 0 else { throw CIError(.io, "Cannot open $GITHUB_ENV (\(path)): \(String(cString: strerror(errno))).") }
      defer { close(fd) }
      var text = text
      let written = text.withUTF8 { write(fd, $0.baseAddress, $0.count) }
      guard written == text.utf8.count else {
        throw CIError(.io, "Cannot append to $GITHUB_ENV (\(path)): \(written < 0 ? String(cString: strerror(errno)) : "short write"). Nothing usable was exported.")
      }
    }
  }
}
