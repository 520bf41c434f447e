public import ODRBase
/// The one error type of ODRKeys. Messages name keys, never their values.
public struct KeysError: Error, Sendable, CustomStringConvertible {
  /// What kind of failure this is (its codes: `ErrorCode where Owner == KeysError`).
  public typealias Code = ErrorCode<KeysError>

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

extension KeysError: CodedError {
  public var domain: String { "keys" }
  public var isTransient: Bool { code == .interruptedImport }
}

extension ErrorCode where Owner == KeysError {
  /// An APIKeys document that breaks the rules of docs/design.md, "APIKeys documents".
  public static let invalidDocument = Self("invalid-document")
  /// An import failed and some keys could not be put back as they were
  /// yet: its journal puts them back at the next read of the keys.
  public static let interruptedImport = Self("interrupted-import")
  /// An encrypted secrets tag none of this machine's identities can open.
  public static let notRecipient = Self("not-recipient")
}
