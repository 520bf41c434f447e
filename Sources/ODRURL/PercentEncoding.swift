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

  private static let upperHex = Array("0123456789ABCDEF".utf8)
  private static let lowerHex = Array("0123456789abcdef".utf8)
}
