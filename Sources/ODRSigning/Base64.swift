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
    guard let data = Data(base64Encoded: String(text)), data.base64EncodedString().utf8.elementsEqual(text.utf8) else { return nil }
    return Array(data)
  }
}

extension StringProtocol {
  /// The text without leading and trailing spaces, tabs, CR and LF.
  package var trimmed: String {
    // On the UTF-8 view: a 2,664-character hybrid key is read many times per catalog.
    let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
    let text = Substring(self)
    guard let first = text.utf8.firstIndex(where: { !isSpace($0) }), let last = text.utf8.lastIndex(where: { !isSpace($0) }) else { return "" }
    return String(text[first...last])
  }
}
