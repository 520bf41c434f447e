import ODRBase

/// The rules names, services and values must follow (docs/design.md, "APIKeys documents"), checked
/// before anything touches the keyring.
public enum KeyringInput {
  /// The largest value accepted, in UTF-8 bytes.
  public static let maxValueBytes = KeyName.maxValueBytes

  /// The item where odr keeps the keys' metadata (env, header, hosts…).
  public static let metadataName = "_odr.metadata"
  /// The item where `odr fetch` keeps the previous values of the keys it is
  /// changing, until the import is complete: what a crashed import is
  /// rolled back from.
  public static let journalName = "_odr.journal"
  /// The largest record (metadata or journal) accepted, in UTF-8 bytes.
  public static let maxRecordBytes = 16 * 1024 * 1024

  /// True for odr's own records. They start with '_', which no key name
  /// may, so they never collide with a key; `names()` and `values(for: nil)`
  /// leave them out.
  public static func isRecord(_ name: String) -> Bool { name.hasPrefix("_") }

  /// Throws unless `name` matches `[A-Za-z][A-Za-z0-9_.-]{0,127}` (or is
  /// one of odr's records).
  public static func validate(name: String) throws(KeyringError) {
    if name == metadataName || name == journalName { return }
    if let problem = KeyName.problem(name) { throw KeyringError(.invalidInput, problem) }
  }

  /// `validate(name:)` for a name a user typed: odr's own records
  /// (names beginning `_odr.`) are refused too, so `odr get`, `set` and
  /// `delete` never touch the journal or the metadata.
  public static func validate(userKeyName name: String) throws(KeyringError) {
    if let problem = KeyName.problem(userKeyName: name) { throw KeyringError(.invalidInput, problem) }
  }

  /// Throws unless `service` looks like a bundle id: 1–255 of letters,
  /// digits, '.', '_' or '-', starting with a letter or digit.
  public static func validate(service: String) throws(KeyringError) {
    guard BundleID.isValid(service) else {
      throw KeyringError(.invalidInput, "Invalid service \(KeyName.quoted(service)): use a bundle id such as com.example.demo (letters, digits, '.', '_', '-').")
    }
  }

  /// `validate(service:)` for a service holding API keys (every command
  /// but `odr identity` and `odr signing-key`, every `odr://` reference,
  /// odr.json `"auth"`, the service a catalog's keys are imported into):
  /// odr's own services, which hold private keys, are refused.
  public static func validate(keyService service: String) throws(KeyringError) {
    if BundleID.isReserved(service) {
      throw KeyringError(.reserved, "The service '\(service)' is reserved for odr's own private keys; only `odr identity` and `odr signing-key` read or write it. Name the API keys' service (a bundle id such as com.example.demo).")
    }
    try validate(service: service)
  }

  /// Throws unless `value` is non-empty and at most ``maxValueBytes`` bytes
  /// (a record: ``maxRecordBytes``). The message names the key, never the value.
  public static func validate(value: String, for name: String) throws(KeyringError) {
    if let problem = KeyName.valueProblem(value, for: name, limit: isRecord(name) ? maxRecordBytes : maxValueBytes) {
      throw KeyringError(.invalidInput, problem)
    }
  }
}
