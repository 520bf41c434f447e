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
