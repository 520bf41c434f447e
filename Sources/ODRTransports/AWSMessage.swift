/// What of an AWS error answer goes into odr's messages: its code when it
/// is a plain identifier, and its text cut short to printable ASCII. A
/// hostile or broken endpoint chooses both, and may echo the request: any
/// text that holds twelve characters in a row of a secret the request
/// carried (a web identity token, a secret key, a session token, a file
/// key) is not quoted at all.
package enum AWSMessage {
  /// `AccessDeniedException` from `com.amazonaws.kms#AccessDeniedException`;
  /// "an unnamed error" for anything that is not an identifier or that
  /// quotes one of `secrets`.
  package static func identifier(_ text: String, hiding secrets: [String] = []) -> String {
    let name = text.split(separator: "#").last.map(String.init) ?? text
    guard (1...80).contains(name.count), name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "_") }),
          !quotes(name, secrets) else {
      return "an unnamed error"
    }
    return name
  }

  /// At most 300 printable ASCII characters of `text`; a placeholder when
  /// it quotes one of `secrets`.
  package static func clean(_ text: String, hiding secrets: [String] = []) -> String {
    let head = String(text.unicodeScalars.prefix(4_000))
    guard !quotes(head, secrets) else { return "(the answer quotes the request; not shown)" }
    let kept = head.unicodeScalars.prefix(300).map { (32...126).contains($0.value) ? Character($0) : "?" }
    return String(kept) + (text.unicodeScalars.count > 300 ? "…" : "")
  }

  /// Whether `text` holds twelve characters in a row of any of `secrets`.
  static func quotes(_ text: String, _ secrets: [String]) -> Bool {
    let window = 12
    let haystack = Array(text.utf8)
    for secret in secrets {
      let bytes = Array(secret.utf8)
      guard bytes.count >= window else {
        if !bytes.isEmpty, haystack.count >= bytes.count, (0...(haystack.count - bytes.count)).contains(where: { haystack[$0..<($0 + bytes.count)].elementsEqual(bytes) }) { return true }
        continue
      }
      var starts: [ArraySlice<UInt8>: Bool] = [:]
      for offset in 0...(bytes.count - window) { starts[bytes[offset..<(offset + window)]] = true }
      if haystack.count >= window, (0...(haystack.count - window)).contains(where: { starts[haystack[$0..<($0 + window)]] != nil }) { return true }
    }
    return false
  }
}
