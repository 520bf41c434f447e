public import ODRBase
/// The one error type of ODRCI. Messages name keys and variables, never
/// values. (ODRCI's functions are declared `throws`, not `throws(CIError)`:
/// Swift 6.3.1's optimizer crashes splitting async callers of typed-throws
/// code in release builds.)
public struct CIError: Error, Sendable, CustomStringConvertible {
  /// What kind of failure this is. New codes may be added.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    /// A stable identifier, used in `--json` output.
    public let rawValue: String
    init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// A key asked for with `--only` that the service does not hold, or no
    /// keys at all.
    public static let notFound = Code("not-found")
    /// A variable name that is not valid, is reserved, or is used twice.
    public static let invalidVariable = Code("invalid-variable")
    /// A value the chosen output format cannot carry (or GitLab cannot mask).
    public static let unsupportedValue = Code("unsupported-value")
    /// The command to run does not exist (exit 127, as in a shell).
    public static let commandNotFound = Code("command-not-found")
    /// The command exists but cannot be run (exit 126, as in a shell).
    public static let commandNotExecutable = Code("command-not-executable")
    /// Writing output or starting the command failed.
    public static let io = Code("io")
    /// A dotenv file, template or `odr://` reference that does not parse.
    public static let invalidInput = Code("invalid-input")
    /// The sandbox of `odr exec --proxy` could not be made; the command
    /// was not run (exit 11).
    public static let noSandbox = Code("no-sandbox")
  }

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

  public var description: String { message }
}

extension CIError: ODRError {
  public var domain: String { "ci" }
  public var kind: String { code.rawValue }
  public var isTransient: Bool { false }
}
