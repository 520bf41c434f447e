/// The one shape of every error odr's libraries throw (but
/// `CancellationError`, when the task is cancelled), for an app to switch
/// on without knowing which module failed:
///
/// ```swift
/// do {
///   key = try await provider.key("Weather")
/// } catch let error as any ODRError where error.isTransient {
///   // a timeout, a dropped connection, a locked keyring: try again later
/// } catch let error as any ODRError {
///   log("\(error.domain) \(error.kind): \(error.message)")
/// }
/// ```
public protocol ODRError: Error, Sendable, CustomStringConvertible {
  /// The part of odr that failed: "keyring", "keys", "resources",
  /// "trust", "http", "url", "configuration", "exec", "aws", "system".
  var domain: String { get }
  /// A stable name of the kind of failure within its domain ("not-found",
  /// "locked", "integrity", …): the `code` odr prints in `--json`. New
  /// kinds may be added.
  var kind: String { get }
  /// What happened and what to do, for a person to read; never a secret.
  var message: String { get }
  /// Whether the same call may succeed later with nothing changed by the
  /// app (a timeout, a dropped connection, a keyring locked until its user
  /// unlocks it, a server error): worth a retry. False when something must
  /// change first (a name, a file, a key, the trust).
  var isTransient: Bool { get }
}
