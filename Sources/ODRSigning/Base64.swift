import FoundationEssentials

/// The base64 forms the formats use.
package enum Base64 {
  /// Standard alphabet without padding (age).
  package static func unpadded(_ bytes: some Sequence<UInt8>) -> String {
    var text = Data(bytes).base64EncodedString()
    while text.last == "=" { text.removeLast() }
    return text
  }

  /// Decodes canonical unpadded base64 (age's rule): no `=`, no line
  /// breaks, and unused trailing bits zero.
  package static func decodeUnpadded(_ text: Substring) -> [UInt8]? {
    guard !text.contains("="), text.count % 4 != 1 else { return nil }
    let padded = String(text) + String(repeating: "=", count: (4 - text.count % 4) % 4)
    guard let data = Data(base64Encoded: padded), unpadded(data) == text else { return nil }
    return Array(data)
  }

  /// Decodes canonical padded base64 (odr's own key and signature forms).
  package static func decodePadded(_ text: Substring) -> [UInt8]? {
    guard let data = Data(base64Encoded: String(text)), data.base64EncodedString() == text else { return nil }
    return Array(data)
  }
}

extension StringProtocol {
  /// The text without leading and trailing spaces, tabs, CR and LF.
  package var trimmed: String {
    let space: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
    return String(self.drop(while: space).reversed().drop(while: space).reversed())
  }
}
