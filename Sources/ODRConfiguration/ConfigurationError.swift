public import ODRBase
/// A configuration that cannot be used: a broken odr.json, a bad value in
/// `ODR_TRUST` or `ODR_MAX_SIZE`, no catalog at all. The message names the
/// file (line and column) or variable, and what to write instead. `odr`
/// exits 2 (usage) on it.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
  /// What is wrong where, and what to do.
  public let message: String

  public init(_ message: String) {
    self.message = message
  }

  public var description: String { message }
}

extension ConfigurationError: ODRError {
  public var domain: String { "configuration" }
  public var kind: String { "invalid-configuration" }
  public var isTransient: Bool { false }
}
