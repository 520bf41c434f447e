/// Percent-encoding of every byte outside RFC 3986's unreserved characters
/// (`A–Z a–z 0–9 - . _ ~`): the one rule behind query pairs (`APIClient`),
/// S3 request signing (`SigV4Signer`) and the forms a secret leaks in
/// (`SecretForms`).
public enum PercentEncoding {
  /// `bytes` encoded; `upper`: upper-case hex (RFC 3986 prefers it);
  /// `plusForSpace`: `+` for a space, as HTML forms do; `keepSlash`: `/`
  /// left as it is, as in paths.
  public static func encode(_ bytes: some Sequence<UInt8>, upper: Bool = true, plusForSpace: Bool = false, keepSlash: Bool = false) -> [UInt8] {
    let hex = upper ? upperHex : lowerHex
    var out: [UInt8] = []
    for byte in bytes {
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
           UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
        out.append(byte)
      case UInt8(ascii: "/") where keepSlash:
        out.append(byte)
      case UInt8(ascii: " ") where plusForSpace:
        out.append(UInt8(ascii: "+"))
      default:
        out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
      }
    }
    return out
  }

  /// `text`'s UTF-8 encoded, upper-case hex; `keepSlash` as above.
  public static func encode(_ text: String, keepSlash: Bool = false) -> String {
    String(decoding: encode(text.utf8, keepSlash: keepSlash), as: UTF8.self)
  }

  /// `text` with each `%` and two hex digits decoded to its byte (a `%`
  /// not followed by two hex digits is kept as it is); `+` stays `+`.
  public static func decode(_ text: some StringProtocol) -> [UInt8] {
    let bytes = Array(text.utf8)
    var decoded: [UInt8] = []
    var index = 0
    while index < bytes.count {
      if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
        decoded.append(high << 4 | low)
        index += 3
      } else {
        decoded.append(bytes[index])
        index += 1
      }
    }
    return decoded
  }

  private static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }

  private static let upperHex = Array("0123456789ABCDEF".utf8)
  private static let lowerHex = Array("0123456789abcdef".utf8)
}
