public import ODRBase

/// The one error type of ODRExec. Messages name keys and variables, never
/// values. (ODRExec's functions are declared `throws`, not `throws(ExecError)`:
/// Swift 6.3.1's optimizer crashes splitting async callers of typed-throws
/// code in release builds.)
public typealias ExecError = DomainError<ExecDomain>

/// The domain of ``ExecError``: "exec".
public enum ExecDomain: ErrorDomain {
  public static let name = "exec"
}

extension ErrorCode where Owner == ExecError {
  /// A key asked for with `--only` that the service does not hold, or no
  /// keys at all.
  public static let notFound = Self("not-found")
  /// A variable name that is not valid, is reserved, or is used twice.
  public static let invalidVariable = Self("invalid-variable")
  /// A value the chosen output format cannot carry (or GitLab cannot mask).
  public static let unsupportedValue = Self("unsupported-value")
  /// The command to run does not exist (exit 127, as in a shell).
  public static let commandNotFound = Self("command-not-found")
  /// The command exists but cannot be run (exit 126, as in a shell).
  public static let commandNotExecutable = Self("command-not-executable")
  /// Writing output or starting the command failed.
  public static let io = Self("io")
  /// A dotenv file, template or `odr://` reference that does not parse.
  public static let invalidInput = Self("invalid-input")
  /// The sandbox of `odr exec --proxy` could not be made; the command
  /// was not run (exit 11).
  public static let noSandbox = Self("no-sandbox")
}
