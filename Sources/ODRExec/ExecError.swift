public import ODRBase
/// The one error type of ODRExec. Messages name keys and variables, never
/// values. (ODRExec's functions are declared `throws`, not `throws(ExecError)`:
/// Swift 6.3.1's optimizer crashes splitting async callers of typed-throws
/// code in release builds.)
public struct ExecError: Error, Sendable, CustomStringConvertible {
  /// What kind of failure this is (its codes: `ErrorCode where Owner == ExecError`).
  public typealias Code = ErrorCode<ExecError>

  /// What kind of failure this is.
  public let code: Code
  /// What happened and what to do, for a person to read.
  public let message: String

  /// What failed below, when there is a cause to keep: an `Errno`, a
  /// transport or decoding error, another module's error. For programs;
  /// ``message`` already says what it means for a person.
  public let underlying: (any Error)?

  /// Creates an error.
  public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
    self.code = code
    self.message = message
    self.underlying = underlying
  }

}

extension ExecError: CodedError {
  public var domain: String { "exec" }
  public var isTransient: Bool { false }
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
