/// The rules a key's name and value follow (docs/design.md, "APIKeys
/// documents"): a format rule, shared by the documents that name keys and
/// the stores that keep them. Each check returns what is wrong, for the
/// caller's own error, or nil.
package enum KeyName {
  /// The largest value of a key, in UTF-8 bytes.
  package static let maxValueBytes = 64 * 1024

  /// Why `name` is not a key name (`[A-Za-z][A-Za-z0-9_.-]{0,127}`), or nil.
  package static func problem(_ name: String) -> String? {
    let bytes = Array(name.utf8)
    guard let first = bytes.first, isLetter(first), bytes.count <= 128,
          bytes.allSatisfy({ isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") })
    else {
      return "Invalid key name \(quoted(name)): a name starts with a letter and holds at most 128 letters, digits, '_', '.' or '-'."
    }
    return nil
  }

  /// ``problem(_:)`` for a name a user or a document gives: names beginning
  /// `_odr.` are odr's own records.
  package static func problem(userKeyName name: String) -> String? {
    if name.hasPrefix("_odr.") { return "Invalid key name \(quoted(name)): names beginning with '_odr.' are reserved for odr's own records." }
    return problem(name)
  }

  /// Why `value` cannot be the value of `name` (empty, or over `limit`
  /// bytes), or nil. The message names the key, never the value.
  package static func valueProblem(_ value: String, for name: String, limit: Int = maxValueBytes) -> String? {
    if value.isEmpty { return "The value for key '\(name)' is empty; a key needs a non-empty value." }
    // (Input is read only up to just past the limit, so its full size may be unknown.)
    if value.utf8.count > limit { return "The value for key '\(name)' is more than \(limit) bytes, the limit for one key." }
    return nil
  }

  private static func isLetter(_ b: UInt8) -> Bool { (b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "z") }
  private static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

  /// A name quoted for an error message, shortened and with control
  /// characters escaped so a message stays one readable line.
  package static func quoted(_ s: String) -> String {
    let shown = s.count > 40 ? String(s.prefix(40)) + "…" : s
    return "'" + shown.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? $0.escaped(asASCII: true) : String($0) }.joined() + "'"
  }
}
