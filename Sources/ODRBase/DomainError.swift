/// An error of one part of odr, `Domain`: a code, a message for a person,
/// the cause below it — the one struct behind ResourceError, TrustError,
/// KeysError and ExecError (each a typealias of it), so that each
/// declares only its domain and its codes.
public struct DomainError<Domain: ErrorDomain>: CodedError {
  /// What kind of failure this is (the domain's codes are declared in
  /// `extension ErrorCode where Owner == …Error`).
  public typealias Code = ErrorCode<DomainError>

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

  public var domain: String { Domain.name }
  public var isTransient: Bool { Domain.isTransient(code) }
}

/// What the errors of one ``DomainError`` domain share: the domain's name
/// (``ODRError/domain``) and which of its codes may succeed later.
public protocol ErrorDomain: Sendable {
  /// The domain's name: "resources", "trust", "keys", "exec".
  static var name: String { get }
  /// Whether an error of `code` is worth a retry (default: never).
  static func isTransient(_ code: ErrorCode<DomainError<Self>>) -> Bool
}

extension ErrorDomain {
  public static func isTransient(_ code: ErrorCode<DomainError<Self>>) -> Bool { false }
}
