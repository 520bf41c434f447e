import FoundationEssentials
import ODRURL

/// The forms a secret value leaks in, as bytes — the one list both
/// `odr exec --mask` and the HTTP client's redaction use (``SecretMasker``):
///
/// - as it is;
/// - base64 and base64url, padded and not; the part of them that stays the
///   same at any offset inside a longer base64 text (a Basic auth header);
///   and each line of base64 wrapped at 76 columns (coreutils, MIME) and 64
///   (openssl, PEM), so the first line of a wrapped key is caught too;
/// - percent-encoded: upper- and lower-case hex, `+` for space (form
///   encoding), and with `/` kept (Python's `quote`);
/// - JSON-escaped: with and without `\/`, and with non-ASCII as `\uXXXX`
///   (Python's `json.dumps`), lower- and upper-case hex;
/// - hex, whole and as space-separated bytes (S3 quotes a request so in
///   its signature errors), lower and upper case;
/// - for multi-line values, each line of 8 or more characters.
public enum SecretForms {
  /// Every distinct form of `value` (none for an empty value).
  public static func of(_ value: String) -> Set<[UInt8]> {
    let bytes = Array(value.utf8)
    guard !bytes.isEmpty else { return [] }
    var forms: Set<[UInt8]> = [bytes]
    for url in [false, true] {
      let encoded = base64(bytes, url: url)
      forms.insert(encoded)
      forms.insert(Array(encoded.prefix { $0 != UInt8(ascii: "=") }))
      for width in [64, 76] where encoded.count > width {
        for start in stride(from: 0, to: encoded.count, by: width) where encoded.count - start >= 8 {
          forms.insert(Array(encoded[start..<min(start + width, encoded.count)]))
        }
      }
      // Inside a longer base64 text the value starts 0, 1 or 2 bytes into
      // a 3-byte group; keep the characters that depend on it alone.
      for shift in 0...2 {
        let shifted = base64([UInt8](repeating: 0, count: shift) + bytes, url: url)
        let first = (8 * shift + 5) / 6
        let last = (8 * (shift + bytes.count)) / 6
        if last - first >= 6 { forms.insert(Array(shifted[first..<last])) }
      }
    }
    for upper in [true, false] {
      forms.insert(PercentEncoding.encode(bytes, upper: upper))
      forms.insert(PercentEncoding.encode(bytes, upper: upper, plusForSpace: true))
      forms.insert(PercentEncoding.encode(bytes, upper: upper, keepSlash: true))
      forms.insert(jsonEscaped(value, slash: false, asciiOnly: true, upper: upper))
    }
    // hex, whole and as space-separated bytes (S3's CanonicalRequestBytes
    // in a SignatureDoesNotMatch answer), either case
    for hex in ["0123456789abcdef", "0123456789ABCDEF"].map({ Array($0.utf8) }) {
      let pairs = bytes.map { [hex[Int($0 >> 4)], hex[Int($0 & 15)]] }
      forms.insert(Array(pairs.joined()))
      forms.insert(Array(pairs.joined(separator: [UInt8(ascii: " ")])))
    }
    forms.insert(jsonEscaped(value, slash: false, asciiOnly: false, upper: false))
    forms.insert(jsonEscaped(value, slash: true, asciiOnly: false, upper: false))
    if value.contains(where: \.isNewline) {
      for line in value.split(whereSeparator: \.isNewline) where line.utf8.count >= 8 { forms.insert(Array(line.utf8)) }
    }
    return forms
  }

  /// Foundation's base64 of `bytes`, in the URL alphabet (`-_`) when `url`.
  static func base64(_ bytes: [UInt8], url: Bool) -> [UInt8] {
    let encoded = Array(Data(bytes).base64EncodedString().utf8)
    guard url else { return encoded }
    return encoded.map { $0 == UInt8(ascii: "+") ? UInt8(ascii: "-") : $0 == UInt8(ascii: "/") ? UInt8(ascii: "_") : $0 }
  }


  /// `value` as inside a JSON string; `slash`: `/` as `\/` (Foundation's
  /// encoder); `asciiOnly`: non-ASCII as `\uXXXX` (UTF-16, as Python does).
  static func jsonEscaped(_ value: String, slash: Bool, asciiOnly: Bool, upper: Bool) -> [UInt8] {
    let hex = Array((upper ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
    func unicode(_ unit: UInt16) -> [UInt8] {
      Array("\\u".utf8) + [12, 8, 4, 0].map { hex[Int((unit >> $0) & 15)] }
    }
    var out: [UInt8] = []
    for scalar in value.unicodeScalars {
      switch scalar {
      case "/" where slash: out += Array("\\/".utf8)
      case "\"": out += Array("\\\"".utf8)
      case "\\": out += Array("\\\\".utf8)
      case "\n": out += Array("\\n".utf8)
      case "\r": out += Array("\\r".utf8)
      case "\t": out += Array("\\t".utf8)
      case _ where scalar.value < 0x20: out += unicode(UInt16(scalar.value))
      case _ where scalar.value >= 0x80 && asciiOnly: out += String(scalar).utf16.flatMap(unicode)
      default: out += Array(String(scalar).utf8)
      }
    }
    return out
  }
}
