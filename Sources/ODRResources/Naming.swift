/// The naming rules of publisher folders and catalogs.
enum Naming {
  /// Tag names: `[A-Za-z0-9][A-Za-z0-9_.-]{0,127}`.
  static func validate(tag: String) throws {
    let bytes = Array(tag.utf8)
    guard let first = bytes.first, isAlphanumeric(first), bytes.count <= 128, bytes.allSatisfy(isNameByte) else {
      throw ResourceError(.invalidSource, "Invalid tag name '\(tag.prefix(60))': use 1–128 letters, digits, '_', '.' or '-', starting with a letter or digit.")
    }
  }

  static func isValidBundle(_ bundle: String) -> Bool {
    let bytes = Array(bundle.utf8)
    guard let first = bytes.first else { return false }
    return isAlphanumeric(first) && bytes.count <= 255 && bytes.allSatisfy(isNameByte)
  }

  /// A path inside a tag: relative, `/`-separated, no empty, `.` or `..`
  /// component, no backslash or control character.
  static func validate(path: String, in tag: String) throws {
    let components = path.split(separator: "/", omittingEmptySubsequences: false)
    let safe = !path.isEmpty && !path.hasPrefix("/") && path.utf8.count <= 1024
      && components.allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." }
      && !path.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f || $0 == "\\" }
    guard safe else {
      throw ResourceError(.invalidSource, "Tag '\(tag)' has an unsafe path '\(path.prefix(80))': paths are relative, use '/', and never contain '..', '.', empty parts or control characters.")
    }
  }

  static func isSHA256Hex(_ s: String) -> Bool {
    s.utf8.count == 64 && s.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
  }

  private static func isAlphanumeric(_ b: UInt8) -> Bool {
    (b >= 0x30 && b <= 0x39) || ((b | 0x20) >= 0x61 && (b | 0x20) <= 0x7a)
  }

  private static func isNameByte(_ b: UInt8) -> Bool {
    isAlphanumeric(b) || b == UInt8(ascii: "_") || b == UInt8(ascii: ".") || b == UInt8(ascii: "-")
  }
}
