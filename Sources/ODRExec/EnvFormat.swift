import FoundationEssentials
public import ODRBase
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// How `odr env` prints variables. Every format reproduces each value byte
/// for byte in the consumer it is made for.
public enum EnvFormat: String, Sendable, CaseIterable {
  /// `export NAME='value'` lines for `eval "$(odr env)"` in any POSIX shell.
  case shell
  /// `NAME='value'` lines for `set -a; . file` (shell quoting).
  case dotenv
  /// One JSON object `{"NAME": "value"}`.
  case json
  /// GitHub Actions: `NAME<<DELIMITER` blocks for `$GITHUB_ENV` with a
  /// random delimiter per value, and `::add-mask::` for every line of every
  /// value on stdout.
  case github
  /// GitHub Actions step outputs: the same blocks for `$GITHUB_OUTPUT`
  /// (each key an output of the step, named by its variable), the same masks.
  case githubOutput = "github-output"
  /// A GitLab dotenv report (`NAME=value`, no quoting, one line each).
  /// Refuses values GitLab cannot mask unless unmasked values are allowed.
  case gitlab

  /// What to print on stdout and, for `github` and `github-output`, what
  /// to append to the `$GITHUB_ENV` or `$GITHUB_OUTPUT` file.
  public struct Rendered: Sendable {
    public let stdout: String
    public let githubEnv: String?
  }

  /// The variable naming the file the GitHub formats append to.
  public var githubFileVariable: String? {
    switch self {
    case .github: "GITHUB_ENV"
    case .githubOutput: "GITHUB_OUTPUT"
    default: nil
    }
  }

  /// Appends a ``Rendered/githubEnv`` block to the file at `path` that
  /// ``githubFileVariable`` named (O_APPEND, so concurrent steps never
  /// interleave), creating it 0600.
  public func appendToGitHubFile(_ block: String, path: String) throws(ExecError) {
    let variable = githubFileVariable ?? "GITHUB_ENV"
    let fd: FileDescriptor
    do { fd = try FileDescriptor.open(FilePath(path), .writeOnly, options: [.append, .create, .closeOnExec], permissions: [.ownerReadWrite]) } catch {
      throw ExecError(.io, "Cannot open $\(variable) (\(path)): \(error).", underlying: error as? Errno)
    }
    do { _ = try fd.closeAfter { try fd.writeAll(block.utf8) } } catch {
      throw ExecError(.io, "Cannot append to $\(variable) (\(path)): \(error). Nothing usable was exported.", underlying: error as? Errno)
    }
  }

  /// Renders `variables`. `allowUnmasked` lets `gitlab` print values GitLab
  /// would not mask in job logs, and the GitHub formats leave out the masks.
  public func render(_ variables: SecretVariables, allowUnmasked: Bool = false) throws -> Rendered {
    let list = variables.variables
    switch self {
    case .shell:
      return Rendered(stdout: list.map { "export \($0.name)=\(Self.shellQuoted($0.value))\n" }.joined(), githubEnv: nil)
    case .dotenv:
      return Rendered(stdout: list.map { "\($0.name)=\(Self.shellQuoted($0.value))\n" }.joined(), githubEnv: nil)
    case .json:
      let object = Dictionary(uniqueKeysWithValues: list.map { ($0.name, $0.value) })
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
      // encoding a dictionary of strings cannot fail
      let data = (dropping(.cannotFail) { try encoder.encode(object) }) ?? Data("{}".utf8)
      return Rendered(stdout: String(decoding: data, as: UTF8.self) + "\n", githubEnv: nil)
    case .github, .githubOutput:
      var masks = ""
      var file = ""
      for variable in list {
        for line in allowUnmasked ? [] : variable.value.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
          masks += "::add-mask::\(Self.githubCommandEscaped(String(line)))\n"
        }
        let delimiter = Self.delimiter(notIn: variable.value)
        file += "\(variable.name)<<\(delimiter)\n\(variable.value)\n\(delimiter)\n"
      }
      return Rendered(stdout: masks, githubEnv: file)
    case .gitlab:
      for variable in list {
        if let problem = Self.gitlabProblem(variable.value, allowUnmasked: allowUnmasked) {
          throw ExecError(.unsupportedValue, "\(variable.name) (key '\(variable.key)') \(problem)")
        }
      }
      return Rendered(stdout: list.map { "\($0.name)=\($0.value)\n" }.joined(), githubEnv: nil)
    }
  }

  /// `value` in single quotes, each `'` written as `'\''`: no character
  /// inside is special to a POSIX shell, newlines included.
  static func shellQuoted(_ value: String) -> String {
    "'" + value.replacing("'", with: "'\\''") + "'"
  }

  /// GitHub's workflow-command data escaping.
  static func githubCommandEscaped(_ text: String) -> String {
    text.replacing("%", with: "%25").replacing("\r", with: "%0D").replacing("\n", with: "%0A")
  }

  /// A random `ghadelimiter_<hex>` that is not a line of `value`.
  static func delimiter(notIn value: String) -> String {
    var generator = SystemRandomNumberGenerator()
    while true {
      let candidate = "ghadelimiter_" + (0..<4).map { _ in String(generator.next() as UInt32, radix: 16) }.joined()
      if !value.contains(candidate) { return candidate }
    }
  }

  /// Why GitLab's dotenv report cannot carry `value`, or cannot mask it.
  static func gitlabProblem(_ value: String, allowUnmasked: Bool) -> String? {
    if value.contains(where: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) {
      return "holds a line break, which a GitLab dotenv report cannot carry. Use --format dotenv and `source` it in the job instead."
    }
    if value.first?.isWhitespace == true || value.last?.isWhitespace == true {
      return "starts or ends with white space, which GitLab strips from dotenv values."
    }
    if allowUnmasked { return nil }
    if value.count < 8 {
      return "is shorter than 8 characters, so GitLab cannot mask it in job logs. Pass --allow-unmasked to print it anyway."
    }
    let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_@:.~")
    if value.contains(where: { !allowed.contains($0) }) {
      return "holds characters GitLab cannot mask (only A-Z a-z 0-9 + / = - _ @ : . ~). Pass --allow-unmasked to print it anyway."
    }
    return nil
  }
}
