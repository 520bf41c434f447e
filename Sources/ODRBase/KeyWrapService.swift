/// A service that keeps keys of its own and wraps small secrets under them,
/// bound to a context — AWS KMS, for a pack's `awskms:` recipients
/// (ODRTransports' AWSKMS). The age layer hands it the file key and keeps
/// what it returns in a stanza; it never sees the service's keys.
public protocol KeyWrapService: Sendable {
  /// `secret` wrapped under `key` (an ARN), opened only with the same `context`.
  func wrap(_ secret: [UInt8], key: String, context: [String: String]) async throws -> [UInt8]
  /// The secret `blob` wraps, if `key` and `context` are the ones it was wrapped with.
  func unwrap(_ blob: [UInt8], key: String, context: [String: String]) async throws -> [UInt8]
}
