import ODRBase

/// The naming rules of publisher folders and catalogs.
package enum Naming {
  /// Tag names: `[A-Za-z0-9][A-Za-z0-9_.-]{0,127}`.
  package static func validate(tag: String) throws {
    guard BundleID.isValid(tag, maxLength: 128) else {
      throw ResourceError(.invalidSource, "Invalid tag name '\(tag.prefix(60))': use 1–128 letters, digits, '_', '.' or '-', starting with a letter or digit.")
    }
  }

  /// A path inside a tag: relative, `/`-separated, no empty, `.` or `..`
  /// component, no backslash or control character.
  package static func validate(path: String, in tag: String) throws {
    guard isSafe(path: path) else {
      throw ResourceError(.invalidSource, "Tag '\(tag)' has an unsafe path '\(path.prefix(80))': paths are relative, use '/', and never contain '..', '.', empty parts or control characters.")
    }
  }

  /// One pass over the bytes (catalogs list thousands of paths).
  private static func isSafe(path: String) -> Bool {
    var path = path
    return path.withUTF8 { bytes in
      guard !bytes.isEmpty, bytes.count <= 1024 else { return false }
      var componentStart = 0
      for index in 0...bytes.count {
        let byte = index < bytes.count ? bytes[index] : UInt8(ascii: "/")
        if byte < 0x20 || byte == 0x7f || byte == UInt8(ascii: "\\") { return false }
        guard byte == UInt8(ascii: "/") else { continue }
        let length = index - componentStart
        if length == 0 || (bytes[componentStart] == UInt8(ascii: ".") && (length == 1 || (length == 2 && bytes[componentStart + 1] == UInt8(ascii: "."))))  {
          return false
        }
        componentStart = index + 1
      }
      return true
    }
  }

  package static func isSHA256Hex(_ s: String) -> Bool {
    s.utf8.count == 64 && s.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
  }
}
