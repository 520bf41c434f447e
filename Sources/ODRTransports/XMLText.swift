/// The text of one element of a small XML answer (STS's, S3's errors),
/// read without a DOM: the first `<Name>…</Name>` (no attributes, no
/// nesting inside it), entities decoded. Linear in the input; what it
/// returns is never longer than what it read.
package enum XMLText {
  package static func element(_ name: String, in text: String) -> String? {
    guard let open = text.firstRange(of: "<\(name)>"),
          let close = text[open.upperBound...].firstRange(of: "</\(name)>") else { return nil }
    let inner = text[open.upperBound..<close.lowerBound]
    guard !inner.contains("<") else { return nil }
    return decode(inner)
  }

  /// `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;` and numeric references;
  /// anything else is kept as it is.
  static func decode(_ text: Substring) -> String {
    guard text.contains("&") else { return String(text) }
    var out = ""
    var rest = text[...]
    while let amp = rest.firstIndex(of: "&") {
      out += rest[..<amp]
      rest = rest[amp...]
      guard let semicolon = rest.prefix(12).firstIndex(of: ";") else {
        out += "&"
        rest = rest.dropFirst()
        continue
      }
      let entity = rest[rest.index(after: rest.startIndex)..<semicolon]
      let named = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'"]
      if let value = named[String(entity)] {
        out += value
      } else if entity.hasPrefix("#"), let scalar = numeric(entity.dropFirst()).flatMap(Unicode.Scalar.init) {
        out.unicodeScalars.append(scalar)
      } else {
        out += "&"
        rest = rest.dropFirst()
        continue
      }
      rest = rest[rest.index(after: semicolon)...]
    }
    return out + rest
  }

  private static func numeric(_ digits: Substring) -> UInt32? {
    digits.hasPrefix("x") || digits.hasPrefix("X") ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits)
  }
}
