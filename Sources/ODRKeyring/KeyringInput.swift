import ODRBase

/// The rules names, services and values must follow (docs/design.md, "APIKeys documents"), checked
/// before anything touches the keyring.
public enum KeyringInput {
  /// The largest value accepted, in UTF-8 bytes.
  public static let maxValueBytes = 64 * 1024

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
    let bytes = Array(name.utf8)
    guard let first = bytes.first, isLetter(first), bytes.count <= 128,
          bytes.allSatisfy({ isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") })
    else {
      throw KeyringError(.invalidInput, "Invalid key name \(quoted(name)): a name starts with a letter and holds at most 128 letters, digits, '_', '.' or '-'.")
    }
  }

  /// `validate(name:)` for a name a user typed: odr's own records
  /// (names beginning `_odr.`) are refused too, so `odr get`, `set` and
  /// `delete` never touch the journal or the metadata.
  public static func validate(userKeyName name: String) throws(KeyringError) {
    if name.hasPrefix("_odr.") {
      throw KeyringError(.invalidInput, "Invalid key name \(quoted(name)): names beginning with '_odr.' are reserved for odr's own records.")
    }
    try validate(name: name)
  }

  /// Throws unless `service` looks like a bundle id: 1–255 of letters,
  /// digits, '.', '_' or '-', starting with a letter or digit.
  public static func validate(service: String) throws(KeyringError) {
    guard BundleID.isValid(service) else {
      throw KeyringError(.invalidInput, "Invalid service \(quoted(service)): use a bundle id such as com.example.demo (letters, digits, '.', '_', '-').")
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

  /// Throws unless `value` is non-empty and at most ``maxValueBytes`` bytes.
  /// The message names the key, never the value.
  public static func validate(value: String, for name: String) throws(KeyringError) {
    if value.isEmpty {
      throw KeyringError(.invalidInput, "The value for key '\(name)' is empty; a key needs a non-empty value.")
    }
    let limit = isRecord(name) ? maxRecordBytes : maxValueBytes
    if value.utf8.count > limit {
      // (Input is read only up to just past the limit, so its full size may be unknown.)
      throw KeyringError(.invalidInput, "The value for key '\(name)' is more than \(limit) bytes, the limit for one key.")
    }
  }

  private static func isLetter(_ b: UInt8) -> Bool { (b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "z") }
  private static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

  /// A name quoted for an error message, shortened and with control
  /// characters escaped so a message stays one readable line.
  private static func quoted(_ s: String) -> String {
    let shown = s.count > 40 ? String(s.prefix(40)) + "…" : s
    return "'" + shown.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? $0.escaped(asASCII: true) : String($0) }.joined() + "'"
  }
}
