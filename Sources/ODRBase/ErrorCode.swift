/// A kind of failure of one error type, `Owner`: a stable name, printed as
/// `code` in `--json` and as an ``ODRError``'s `kind`. Each error type
/// declares its codes in an extension (`extension ErrorCode where Owner ==
/// KeysError { public static let notRecipient = Self("not-recipient") }`);
/// new codes may be added.
public struct ErrorCode<Owner>: Hashable, Sendable, CustomStringConvertible, Encodable {
  /// The stable name.
  public let rawValue: String

  package init(_ rawValue: String) { self.rawValue = rawValue }

  public var description: String { rawValue }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(rawValue)
  }
}

/// The one shape of odr's coded errors: a ``code``, a ``message`` for a
/// person, the cause below it. ``ODRError``'s `kind` is the code's name
/// and the error's description its message.
public protocol CodedError: ODRError {
  /// What kind of failure this is.
  var code: ErrorCode<Self> { get }
  /// What failed below, when there is a cause to keep: an `Errno`, a
  /// transport or decoding error, another module's error. For programs;
  /// ``ODRError/message`` already says what it means for a person.
  var underlying: (any Error)? { get }
}

extension CodedError {
  public var kind: String { code.rawValue }
  public var description: String { message }
}
