package import FoundationEssentials
/// odr's one JSON reader, for every document a host, a cache, a repository
/// or another program can write (catalogs, odr.json, tags.json, APIKeys
/// documents, state files): strict RFC 8259, bounded, and positioned.
///
/// - **Bounded.** A document larger than its limit is refused before a byte
///   is read, and containers nest at most ``maxDepth`` deep, so no input
///   can exhaust the stack (200,000 `[` once ended odr with SIGSEGV).
/// - **One meaning.** A key may appear once per object (parsers differ on
///   which of two equal keys wins; a signed document must have one meaning),
///   compared after escapes are decoded (`"\u0061"` is `"a"`).
/// - **Positions.** Every failure carries the byte offset it is about, which
///   ``position(of:in:)`` turns into a line and column.
///
/// It is a cursor: a caller reads the shape it expects (``object(_:)``,
/// ``array(_:)``, ``string(_:)``…) and skips what it does not know
/// (``skipValue()``), so a typed reader such as the catalog's decodes in one
/// pass with no intermediate tree.
package struct JSONReader {
  /// Why a document was not read, at which byte: a short, value-free text.
  package struct Failure: Error, Equatable, Sendable {
    package enum Kind: Equatable, Sendable {
      /// Not JSON: `message` is "expected …".
      case syntax
      /// JSON of another shape than the caller's (`message` names the place).
      case shape
      /// A key twice in one object, and where that object is ("tags.T",
      /// "the top level"; empty when the reader was not told).
      case duplicateKey(String, in: String)
      /// Containers nested deeper than ``JSONReader/maxDepth``.
      case tooDeep
      /// More bytes than the caller's limit.
      case tooLarge
    }
    package let kind: Kind
    package let offset: Int
    package let message: String

    package init(_ kind: Kind, at offset: Int, _ message: String) {
      self.kind = kind
      self.offset = offset
      self.message = message
    }
  }

  /// A key of an object, the keys of the objects around it, and its offset.
  package struct Key: Equatable, Sendable {
    package let path: [String]
    package let name: String
    package let offset: Int
  }

  /// The deepest nesting of arrays and objects read.
  package static let maxDepth = 64

  package let bytes: [UInt8]
  /// The offset of the next byte to read.
  package private(set) var offset = 0
  private var depth = 0
  /// False only to tell syntax errors first, before meaning (a document
  /// whose duplicate key comes before a syntax error is "not JSON").
  private let refusesDuplicateKeys: Bool

  /// A reader of `bytes`; throws `.tooLarge` when there are more than `limit`.
  package init(_ bytes: [UInt8], limit: Int, refusesDuplicateKeys: Bool = true) throws(Failure) {
    guard bytes.count <= limit else {
      throw Failure(.tooLarge, at: limit, "at most \(limit) bytes, not \(bytes.count)")
    }
    self.bytes = bytes
    self.refusesDuplicateKeys = refusesDuplicateKeys
  }

  // MARK: Whole documents

  /// Reads a whole document, throwing its first failure: syntax, a
  /// duplicate key, depth or size. For documents decoded by `Decodable`
  /// afterwards, so the decoder only ever sees strict, bounded JSON.
  package static func check(_ bytes: [UInt8], limit: Int, refusingDuplicateKeys: Bool = true) throws(Failure) {
    var reader = try JSONReader(bytes, limit: limit, refusesDuplicateKeys: refusingDuplicateKeys)
    try reader.skipValue()
    try reader.end()
  }

  /// Every object key of a whole document with its path and offset, in
  /// document order; throws as ``check(_:limit:)`` does (a duplicate key's
  /// failure names the path of its object in `message`).
  package static func keys(of bytes: [UInt8], limit: Int) throws(Failure) -> [Key] {
    var reader = try JSONReader(bytes, limit: limit)
    var keys: [Key] = []
    try reader.collectKeys(path: [], into: &keys)
    try reader.end()
    return keys
  }

  private mutating func collectKeys(path: [String], into keys: inout [Key]) throws(Failure) {
    switch try peek() {
    case UInt8(ascii: "{"):
      // The object's path names it in a duplicate key's message.
      try object(path.isEmpty ? "the top level" : path.joined(separator: ".")) { (reader: inout JSONReader, name: String, at: Int) throws(Failure) in
        keys.append(Key(path: path, name: name, offset: at))
        try reader.collectKeys(path: path + [name], into: &keys)
      }
    case UInt8(ascii: "["):
      try array { (reader: inout JSONReader) throws(Failure) in try reader.collectKeys(path: path + ["[]"], into: &keys) }
    default:
      try skipValue()
    }
  }

  /// 1-based line and column of `offset` in `bytes`.
  package static func position(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
    let before = bytes[..<min(max(offset, 0), bytes.count)]
    let line = before.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
    let column = before.count - (before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0) + 1
    return (line, column)
  }

  // MARK: Values

  /// The first byte of the next value (spaces skipped); throws at the end.
  package mutating func peek() throws(Failure) -> UInt8 {
    skipSpace()
    guard offset < bytes.count else { throw syntax("a value") }
    return bytes[offset]
  }

  /// The first byte of what follows (spaces skipped), nil at the end.
  private mutating func nextByte() -> UInt8? {
    skipSpace()
    return offset < bytes.count ? bytes[offset] : nil
  }

  /// Throws unless only spaces are left.
  package mutating func end() throws(Failure) {
    skipSpace()
    guard offset == bytes.count else { throw syntax("the end of the document") }
  }

  /// An object: `member` is called with each key and its offset and must
  /// read (or skip) the value.
  package mutating func object(_ at: String = "", _ member: (inout JSONReader, String, Int) throws(Failure) -> Void) throws(Failure) {
    guard try peek() == UInt8(ascii: "{") else { throw wrongType(at, "an object") }
    try enter()
    if try peek() == UInt8(ascii: "}") { return leave() }
    var seen = Set<String>()
    while true {
      guard try peek() == UInt8(ascii: "\"") else { throw syntax("a key in double quotes") }
      let keyOffset = offset
      let key = try rawString()
      guard seen.insert(key).inserted || !refusesDuplicateKeys else {
        throw Failure(.duplicateKey(key, in: at), at: keyOffset, "'\(key.prefix(60))' appears twice\(at.isEmpty ? " in one object" : " in \(at)")")
      }
      guard nextByte() == UInt8(ascii: ":") else { throw syntax("':' after the key \"\(key.prefix(40))\"") }
      offset += 1
      try member(&self, key, keyOffset)
      switch nextByte() {
      case UInt8(ascii: ","): offset += 1
      case UInt8(ascii: "}"): return leave()
      default: throw syntax("',' or '}'")
      }
    }
  }

  /// An array: `element` is called for each value and must read (or skip) it.
  package mutating func array(_ at: String = "", _ element: (inout JSONReader) throws(Failure) -> Void) throws(Failure) {
    guard try peek() == UInt8(ascii: "[") else { throw wrongType(at, "an array") }
    try enter()
    if try peek() == UInt8(ascii: "]") { return leave() }
    while true {
      try element(&self)
      switch nextByte() {
      case UInt8(ascii: ","): offset += 1
      case UInt8(ascii: "]"): return leave()
      default: throw syntax("',' or ']'")
      }
    }
  }

  /// True (and the `null` read) when the next value is `null`.
  package mutating func null() throws(Failure) -> Bool {
    guard try peek() == UInt8(ascii: "n") else { return false }
    try literal("null")
    return true
  }

  package mutating func string(_ at: String = "") throws(Failure) -> String {
    guard try peek() == UInt8(ascii: "\"") else { throw wrongType(at, "a string") }
    return try rawString()
  }

  /// An integer written as one (no fraction, no exponent) that fits an `Int`.
  package mutating func integer(_ at: String = "") throws(Failure) -> Int {
    let start = offset
    let token = try numberToken(at)
    guard let value = Int(String(decoding: token, as: UTF8.self)) else {
      throw Failure(.shape, at: start, "wrong type at \(at) (expected an integer)")
    }
    return value
  }

  /// A finite number.
  package mutating func number(_ at: String = "") throws(Failure) -> Double {
    let start = offset
    let token = try numberToken(at)
    guard let value = Double(String(decoding: token, as: UTF8.self)), value.isFinite else {
      throw Failure(.shape, at: start, "bad value at \(at) (a number out of range)")
    }
    return value
  }

  package mutating func bool(_ at: String = "") throws(Failure) -> Bool {
    switch try peek() {
    case UInt8(ascii: "t"): try literal("true"); return true
    case UInt8(ascii: "f"): try literal("false"); return false
    default: throw wrongType(at, "true or false")
    }
  }

  /// Reads and discards any value, as strictly as any other read.
  package mutating func skipValue() throws(Failure) {
    switch try peek() {
    case UInt8(ascii: "{"): try object { (reader: inout JSONReader, _: String, _: Int) throws(Failure) in try reader.skipValue() }
    case UInt8(ascii: "["): try array { (reader: inout JSONReader) throws(Failure) in try reader.skipValue() }
    case UInt8(ascii: "\""): try skipString()
    case UInt8(ascii: "t"): try literal("true")
    case UInt8(ascii: "f"): try literal("false")
    case UInt8(ascii: "n"): try literal("null")
    default: _ = try numberToken("")
    }
  }

  /// Skips any value checking its syntax, depth and UTF-8 but not for
  /// duplicate keys, and without making its strings: for what a staged
  /// reader passes over now and reads strictly later (a catalog's tags,
  /// skipped by the header the trust decision reads, decoded only once it
  /// admitted them).
  package mutating func skipValueUncheckedKeys() throws(Failure) {
    switch try peek() {
    case UInt8(ascii: "{"):
      try enter()
      if try peek() == UInt8(ascii: "}") { return leave() }
      while true {
        guard try peek() == UInt8(ascii: "\"") else { throw syntax("a key in double quotes") }
        try skipString()
        guard nextByte() == UInt8(ascii: ":") else { throw syntax("':' after a key") }
        offset += 1
        try skipValueUncheckedKeys()
        switch nextByte() {
        case UInt8(ascii: ","): offset += 1
        case UInt8(ascii: "}"): return leave()
        default: throw syntax("',' or '}'")
        }
      }
    case UInt8(ascii: "["):
      try enter()
      if try peek() == UInt8(ascii: "]") { return leave() }
      while true {
        try skipValueUncheckedKeys()
        switch nextByte() {
        case UInt8(ascii: ","): offset += 1
        case UInt8(ascii: "]"): return leave()
        default: throw syntax("',' or ']'")
        }
      }
    default:
      try skipValue()
    }
  }

  /// Skips a string value as strictly as ``rawString()`` reads one, without
  /// making it: plain ASCII (the common case: paths, hashes) is checked in
  /// place; anything else is read in full.
  private mutating func skipString() throws(Failure) {
    var end = offset + 1
    while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20, bytes[end] < 0x80 { end += 1 }
    if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
      offset = end + 1
    } else {
      _ = try rawString()
    }
  }

  // MARK: Tokens

  private mutating func enter() throws(Failure) {
    guard depth < Self.maxDepth else {
      throw Failure(.tooDeep, at: offset, "nested deeper than \(Self.maxDepth) levels")
    }
    depth += 1
    offset += 1
  }

  private mutating func leave() {
    depth -= 1
    offset += 1
  }

  private mutating func skipSpace() {
    while offset < bytes.count, bytes[offset] == 0x20 || bytes[offset] == 0x0a || bytes[offset] == 0x0d || bytes[offset] == 0x09 { offset += 1 }
  }

  private func syntax(_ expected: String) -> Failure {
    Failure(.syntax, at: offset, "expected \(expected)")
  }

  private func wrongType(_ at: String, _ expected: String) -> Failure {
    Failure(.shape, at: offset, "wrong type at \(at.isEmpty ? "top level" : at) (expected \(expected))")
  }

  /// A string token (the cursor on its opening quote), unescaped; the text
  /// must be valid UTF-8 with no raw control character.
  private mutating func rawString() throws(Failure) -> String {
    let start = offset
    offset += 1
    let first = offset
    // The common case: no escape, one slice.
    while offset < bytes.count, bytes[offset] != UInt8(ascii: "\""), bytes[offset] != UInt8(ascii: "\\") {
      guard bytes[offset] >= 0x20 else { throw syntax("the string to close before the line ends") }
      offset += 1
    }
    guard offset < bytes.count else { throw Failure(.syntax, at: start, "expected a closing '\"' for this string") }
    var utf8 = Array(bytes[first..<offset])
    while bytes[offset] == UInt8(ascii: "\\") {
      offset += 1
      guard offset < bytes.count else { throw Failure(.syntax, at: start, "expected a closing '\"' for this string") }
      let escape = bytes[offset]
      offset += 1
      switch escape {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
      case UInt8(ascii: "b"): utf8.append(0x08)
      case UInt8(ascii: "f"): utf8.append(0x0c)
      case UInt8(ascii: "n"): utf8.append(0x0a)
      case UInt8(ascii: "r"): utf8.append(0x0d)
      case UInt8(ascii: "t"): utf8.append(0x09)
      case UInt8(ascii: "u"):
        var scalar = try hex4()
        if (0xd800...0xdbff).contains(scalar) {
          guard offset + 1 < bytes.count, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u") else {
            throw syntax("the second half of a surrogate pair")
          }
          offset += 2
          let low = try hex4()
          guard (0xdc00...0xdfff).contains(low) else { throw syntax("the second half of a surrogate pair") }
          scalar = 0x10000 + ((scalar - 0xd800) << 10) + (low - 0xdc00)
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw syntax("a character, not half a surrogate pair") }
        utf8.append(contentsOf: Array(String(Character(unicode)).utf8))
      default: throw Failure(.syntax, at: offset - 2, "expected an escape JSON knows (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)")
      }
      while offset < bytes.count, bytes[offset] != UInt8(ascii: "\""), bytes[offset] != UInt8(ascii: "\\") {
        guard bytes[offset] >= 0x20 else { throw syntax("the string to close before the line ends") }
        utf8.append(bytes[offset])
        offset += 1
      }
      guard offset < bytes.count else { throw Failure(.syntax, at: start, "expected a closing '\"' for this string") }
    }
    offset += 1  // the closing quote
    guard let text = String(validating: utf8, as: UTF8.self) else { throw Failure(.syntax, at: start, "expected UTF-8 text in this string") }
    return text
  }

  private mutating func hex4() throws(Failure) -> UInt32 {
    guard offset + 4 <= bytes.count else { throw syntax("four hex digits after \\u") }
    var value: UInt32 = 0
    for byte in bytes[offset..<(offset + 4)] {
      let digit: UInt8
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
      default: throw syntax("four hex digits after \\u")
      }
      value = value << 4 | UInt32(digit)
    }
    offset += 4
    return value
  }

  /// The bytes of a JSON number token (RFC 8259's grammar).
  private mutating func numberToken(_ at: String) throws(Failure) -> ArraySlice<UInt8> {
    let first = try peek()
    guard first == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
      throw at.isEmpty ? syntax("a value (a string in double quotes, a number, true, false, null, [ or {)") : wrongType(at, "a number")
    }
    let start = offset
    func digits(_ reader: inout JSONReader) -> Int {
      let from = reader.offset
      while reader.offset < reader.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(reader.bytes[reader.offset]) { reader.offset += 1 }
      return reader.offset - from
    }
    if bytes[offset] == UInt8(ascii: "-") { offset += 1 }
    let leading = offset
    guard digits(&self) > 0, bytes[leading] != UInt8(ascii: "0") || offset - leading == 1 else {
      throw Failure(.syntax, at: start, "expected a number (digits, no leading zero)")
    }
    if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
      offset += 1
      guard digits(&self) > 0 else { throw syntax("a digit after '.'") }
    }
    if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
      offset += 1
      if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") { offset += 1 }
      guard digits(&self) > 0 else { throw syntax("a digit in the exponent") }
    }
    return bytes[start..<offset]
  }

  private mutating func literal(_ word: StaticString) throws(Failure) {
    let matches = word.withUTF8Buffer { expected in
      offset + expected.count <= bytes.count && bytes[offset..<(offset + expected.count)].elementsEqual(expected)
    }
    let count = word.withUTF8Buffer { $0.count }
    guard matches else { throw syntax("a value (a string in double quotes, a number, true, false, null, [ or {)") }
    offset += count
  }
}

extension JSONReader {
  /// `T` decoded from `data` by `JSONDecoder`, once the strict reader has
  /// accepted the whole document: for state files, journals and records
  /// that another program could have written. Throws a ``Failure`` or the
  /// decoder's error.
  package static func decode<T: Decodable>(_ type: T.Type, from data: Data, limit: Int = 16 << 20) throws -> T {
    try check([UInt8](data), limit: limit)
    return try JSONDecoder().decode(type, from: data)
  }
}
