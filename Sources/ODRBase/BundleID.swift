/// The bundle id rule, in one place: a catalog's bundle (ODRResources) and
/// the keyring's `service` attribute (ODRKeyring) are the same string. Tag
/// names follow the same rule, at most 128 bytes long.
public enum BundleID {
  /// True for 1–`maxLength` ASCII letters, digits, '.', '_' or '-',
  /// starting with a letter or digit (`com.example.demo`).
  public static func isValid(_ text: String, maxLength: Int = 255) -> Bool {
    let bytes = Array(text.utf8)
    guard let first = bytes.first, isAlphanumeric(first), bytes.count <= maxLength else { return false }
    return bytes.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }
  }

  private static func isAlphanumeric(_ byte: UInt8) -> Bool {
    (0x30...0x39).contains(byte) || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte)
  }
}

extension BundleID {
  /// True for `odr` and every name under `odr.` (`odr.identity`,
  /// `odr.signing-key`): odr's own keyring services, which hold private
  /// keys. A catalog may not claim them as its bundle, and only the
  /// identity and signing-key commands read or write them — never `fetch`,
  /// the key commands, `odr://` references, templates or odr.json `"auth"`.
  public static func isReserved(_ text: String) -> Bool {
    text == "odr" || text.hasPrefix("odr.")
  }
}
