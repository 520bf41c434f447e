/// A strict JSON reader that keeps positions: where the first syntax error
/// is, and where each object key is, so `odr.json` problems can be named by
/// line and column (Foundation's decoder says only "not valid JSON").
/// `odr.json` and `tags.json` use it.
package struct JSONOutline {
  /// A key of an object, the keys leading to its object, and its offset.
  package struct Key {
    package let path: [String]
    package let name: String
    package let offset: Int
  }

  /// A syntax error: what was expected, at which byte.
  package struct SyntaxError: Error {
    package let offset: Int
    package let expected: String
  }

  package private(set) var keys: [Key] = []
  private let bytes: [UInt8]
  private var index = 0

  /// Reads `bytes`; throws the first syntax error.
  package init(_ bytes: [UInt8]) throws(SyntaxError) {
    self.bytes = bytes
    skipSpace()
    try value(path: [])
    skipSpace()
    guard index == bytes.count else { throw SyntaxError(offset: index, expected: "the end of the file") }
  }

  /// 1-based line and column of `offset`.
  package func position(of offset: Int) -> (line: Int, column: Int) {
    Self.position(of: offset, in: bytes)
  }

  package static func position(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
    let before = bytes[..<min(offset, bytes.count)]
    let line = before.filter { $0 == UInt8(ascii: "\n") }.count + 1
    let column = before.count - (before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0) + 1
    return (line, column)
  }

  private mutating func value(path: [String]) throws(SyntaxError) {
    guard index < bytes.count else { throw SyntaxError(offset: index, expected: "a value") }
    switch bytes[index] {
    case UInt8(ascii: "{"): try object(path: path)
    case UInt8(ascii: "["): try array(path: path)
    case UInt8(ascii: "\""): _ = try string()
    case UInt8(ascii: "t"): try literal("true")
    case UInt8(ascii: "f"): try literal("false")
    case UInt8(ascii: "n"): try literal("null")
    default: try number()
    }
  }

  private mutating func object(path: [String]) throws(SyntaxError) {
    index += 1
    skipSpace()
    if peek(UInt8(ascii: "}")) { index += 1; return }
    while true {
      skipSpace()
      guard peek(UInt8(ascii: "\"")) else { throw SyntaxError(offset: index, expected: "a key in double quotes") }
      let offset = index
      let name = try string()
      keys.append(Key(path: path, name: name, offset: offset))
      skipSpace()
      guard peek(UInt8(ascii: ":")) else { throw SyntaxError(offset: index, expected: "':' after the key \"\(name.prefix(40))\"") }
      index += 1
      skipSpace()
      try value(path: path + [name])
      skipSpace()
      if peek(UInt8(ascii: ",")) { index += 1; continue }
      if peek(UInt8(ascii: "}")) { index += 1; return }
      throw SyntaxError(offset: index, expected: "',' or '}'")
    }
  }

  private mutating func array(path: [String]) throws(SyntaxError) {
    index += 1
    skipSpace()
    if peek(UInt8(ascii: "]")) { index += 1; return }
    while true {
      skipSpace()
      try value(path: path)
      skipSpace()
      if peek(UInt8(ascii: ",")) { index += 1; continue }
      if peek(UInt8(ascii: "]")) { index += 1; return }
      throw SyntaxError(offset: index, expected: "',' or ']'")
    }
  }

  private mutating func string() throws(SyntaxError) -> String {
    let start = index
    index += 1
    var content: [UInt8] = []
    while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
      if bytes[index] < 0x20 { throw SyntaxError(offset: index, expected: "the string to close before the line ends") }
      if bytes[index] == UInt8(ascii: "\\") { index += 1 }
      if index < bytes.count { content.append(bytes[index]) }
      index += 1
    }
    guard index < bytes.count else { throw SyntaxError(offset: start, expected: "a closing '\"' for this string") }
    index += 1
    return String(decoding: content, as: UTF8.self)
  }

  private mutating func literal(_ word: String) throws(SyntaxError) {
    let expected = Array(word.utf8)
    guard bytes.count - index >= expected.count, Array(bytes[index..<index + expected.count]) == expected else {
      throw SyntaxError(offset: index, expected: "a value (a string in double quotes, a number, true, false, null, [ or {)")
    }
    index += expected.count
  }

  private mutating func number() throws(SyntaxError) {
    let start = index
    let allowed = Set("+-0123456789.eE".utf8)
    while index < bytes.count, allowed.contains(bytes[index]) { index += 1 }
    let text = String(decoding: bytes[start..<index], as: UTF8.self)
    guard !text.isEmpty, Double(text) != nil, text.first != "+" else {
      throw SyntaxError(offset: start, expected: "a value (a string in double quotes, a number, true, false, null, [ or {)")
    }
  }

  private func peek(_ byte: UInt8) -> Bool { index < bytes.count && bytes[index] == byte }

  private mutating func skipSpace() {
    while index < bytes.count, [0x20, 0x09, 0x0a, 0x0d].contains(bytes[index]) { index += 1 }
  }
}
