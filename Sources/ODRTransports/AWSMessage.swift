/// What of an AWS error answer goes into odr's messages: its code when it
/// is a plain identifier, and its text cut short to printable ASCII (a
/// hostile endpoint chooses both).
package enum AWSMessage {
  /// `AccessDeniedException` from `com.amazonaws.kms#AccessDeniedException`;
  /// "an unnamed error" for anything that is not an identifier.
  package static func identifier(_ text: String) -> String {
    let name = text.split(separator: "#").last.map(String.init) ?? text
    guard (1...80).contains(name.count), name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "_") }) else {
      return "an unnamed error"
    }
    return name
  }

  /// At most 300 printable ASCII characters of `text`.
  package static func clean(_ text: String) -> String {
    let kept = text.unicodeScalars.prefix(300).map { (32...126).contains($0.value) ? Character($0) : "?" }
    return String(kept) + (text.unicodeScalars.count > 300 ? "…" : "")
  }
}
