import FoundationEssentials
import ODRTrust

/// Reads `catalog.json` straight into a ``Catalog``, in one pass over the
/// bytes: the decoder of the client's hot path. `JSONDecoder` takes ~20 ms
/// on a 10,000-file catalog (it builds a map of the document, then a keyed
/// container per object); this takes a fraction of that.
///
/// It reads strict JSON (RFC 8259) and accepts the same catalogs as the
/// synthesized `Codable` conformance with `JSONDecoder` — required keys,
/// `null` for an absent optional, unknown keys skipped, ISO 8601 dates —
/// except that it is stricter: integers must be written as integers (no
/// `1.0`, no `1e3`; `odr pack` never writes them otherwise); a key may
/// appear only once in an object (parsers differ on which of two equal keys
/// wins; a signed catalog must have one meaning); and the whole document
/// must be RFC 8259 JSON — Foundation lets a trailing comma through, and
/// anything at all inside a value it never decodes. The tests decode
/// catalogs both ways, and 6,000 damaged ones, and compare.
struct CatalogReader {
  /// Why a catalog was not read: a short, value-free description.
  struct Failure: Error {
    let description: String
  }

  private let bytes: [UInt8]
  private var index = 0

  init(_ data: Data) {
    bytes = [UInt8](data)
  }

  /// The catalog, or the reason it is not one.
  static func read(_ data: Data) throws(Failure) -> Catalog {
    var reader = CatalogReader(data)
    let catalog = try reader.catalog()
    reader.skipSpace()
    guard reader.index == reader.bytes.count else { throw Failure(description: "not JSON (text after the catalog)") }
    return catalog
  }

  // MARK: The catalog's shape

  private mutating func catalog() throws(Failure) -> Catalog {
    var formatVersion: Int?, bundle: String?, version: Int?, expires: Date?
    var signers: [VerifyingKey]?, handovers: [Handover]?, tags: [String: Catalog.Tag]?
    try object("top level") { (reader: inout CatalogReader, key: String) throws(Failure) in
      switch key {
      case "formatVersion": formatVersion = try reader.integer(key)
      case "bundle": bundle = try reader.string(key)
      case "version": version = try reader.integer(key)
      case "expires": expires = try reader.nullable { (reader: inout CatalogReader) throws(Failure) in try reader.date(key) }
      case "signers": signers = try reader.nullable { (reader: inout CatalogReader) throws(Failure) in try reader.array(key) { (reader: inout CatalogReader) throws(Failure) in try reader.key(key) } }
      case "handovers": handovers = try reader.nullable { (reader: inout CatalogReader) throws(Failure) in try reader.array(key) { (reader: inout CatalogReader) throws(Failure) in try reader.handover() } }
      case "tags": tags = try reader.tags()
      default: try reader.skipValue()
      }
    }
    guard let formatVersion else { throw missing("formatVersion", at: "top level") }
    guard let bundle else { throw missing("bundle", at: "top level") }
    guard let version else { throw missing("version", at: "top level") }
    guard let tags else { throw missing("tags", at: "top level") }
    var catalog = Catalog(bundle: bundle, version: version, expires: expires, signers: signers, handovers: handovers, tags: tags)
    catalog.formatVersion = formatVersion
    return catalog
  }

  private mutating func tags() throws(Failure) -> [String: Catalog.Tag] {
    var tags: [String: Catalog.Tag] = [:]
    try object("tags") { (reader: inout CatalogReader, name: String) throws(Failure) in tags[name] = try reader.tag(name) }
    return tags
  }

  private mutating func tag(_ name: String) throws(Failure) -> Catalog.Tag {
    let at = "tags.\(name)"
    var category: TagCategory?, order: Int?, priority: Double?, secrets: Bool?, encryption: Catalog.Encryption?, files: [Catalog.File]?
    try object(at) { (reader: inout CatalogReader, key: String) throws(Failure) in
      switch key {
      case "category":
        guard let value = TagCategory(rawValue: try reader.string(key)) else { throw Failure(description: "bad value at \(at).category") }
        category = value
      case "order": order = try reader.integer(key)
      case "preservationPriority": priority = try reader.number(key)
      case "secrets": secrets = try reader.bool(key)
      case "encryption": encryption = try reader.nullable { (reader: inout CatalogReader) throws(Failure) in try reader.encryption(at) }
      case "files": files = try reader.array(key) { (reader: inout CatalogReader) throws(Failure) in try reader.file(at) }
      default: try reader.skipValue()
      }
    }
    guard let category else { throw missing("category", at: at) }
    guard let order else { throw missing("order", at: at) }
    guard let priority else { throw missing("preservationPriority", at: at) }
    guard let secrets else { throw missing("secrets", at: at) }
    guard let files else { throw missing("files", at: at) }
    return Catalog.Tag(category: category, order: order, preservationPriority: priority, secrets: secrets, encryption: encryption, files: files)
  }

  private mutating func file(_ at: String) throws(Failure) -> Catalog.File {
    var path: String?, size: Int64?, sha256: String?
    try object("\(at).files") { (reader: inout CatalogReader, key: String) throws(Failure) in
      switch key {
      case "path": path = try reader.string(key)
      case "size": size = Int64(try reader.integer(key))
      case "sha256": sha256 = try reader.string(key)
      default: try reader.skipValue()
      }
    }
    guard let path, let size, let sha256 else { throw missing(path == nil ? "path" : size == nil ? "size" : "sha256", at: "\(at).files") }
    return Catalog.File(path: path, size: size, sha256: sha256)
  }

  private mutating func encryption(_ at: String) throws(Failure) -> Catalog.Encryption {
    var scheme: String?, recipients: Int?
    try object("\(at).encryption") { (reader: inout CatalogReader, key: String) throws(Failure) in
      switch key {
      case "scheme": scheme = try reader.string(key)
      case "recipients": recipients = try reader.integer(key)
      default: try reader.skipValue()
      }
    }
    guard let scheme, let recipients else { throw missing(scheme == nil ? "scheme" : "recipients", at: "\(at).encryption") }
    return Catalog.Encryption(scheme: scheme, recipients: recipients)
  }

  private mutating func handover() throws(Failure) -> Handover {
    var version: Int?, signers: [VerifyingKey]?, signedBy: VerifyingKey?, signature: String?
    try object("handovers") { (reader: inout CatalogReader, key: String) throws(Failure) in
      switch key {
      case "version": version = try reader.integer(key)
      case "signers": signers = try reader.array(key) { (reader: inout CatalogReader) throws(Failure) in try reader.key(key) }
      case "signedBy": signedBy = try reader.key(key)
      case "signature": signature = try reader.string(key)
      default: try reader.skipValue()
      }
    }
    guard let version, let signers, let signedBy, let signature else { throw missing("version, signers, signedBy or signature", at: "handovers") }
    return Handover(version: version, signers: signers, signedBy: signedBy, signature: signature)
  }

  private mutating func key(_ at: String) throws(Failure) -> VerifyingKey {
    let text = try string(at)
    do { return try VerifyingKey(text) } catch { throw Failure(description: "bad value at \(at)") }
  }

  private mutating func date(_ at: String) throws(Failure) -> Date {
    let text = try string(at)
    do { return try Date(text, strategy: .iso8601) } catch { throw Failure(description: "bad value at \(at)") }
  }

  private func missing(_ key: String, at place: String) -> Failure {
    Failure(description: "missing '\(key)' at \(place)")
  }

  // MARK: JSON

  private mutating func skipSpace() {
    while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0a || bytes[index] == 0x0d || bytes[index] == 0x09 { index += 1 }
  }

  private mutating func peek() -> UInt8? {
    skipSpace()
    return index < bytes.count ? bytes[index] : nil
  }

  private mutating func expect(_ byte: UInt8) throws(Failure) {
    guard peek() == byte else { throw Failure(description: "not JSON") }
    index += 1
  }

  /// An object, calling `member` with each key; the member reads its value.
  private mutating func object(_ at: String, _ member: (inout CatalogReader, String) throws(Failure) -> Void) throws(Failure) {
    guard peek() == UInt8(ascii: "{") else { throw Failure(description: "wrong type at \(at)") }
    index += 1
    if peek() == UInt8(ascii: "}") { index += 1; return }
    var seen = Set<String>()
    while true {
      guard peek() == UInt8(ascii: "\"") else { throw Failure(description: "not JSON") }
      let key = try rawString()
      // One meaning per signed byte: a key twice in one object is refused
      // (JSON parsers differ on which one wins).
      guard seen.insert(key).inserted else { throw Failure(description: "the key '\(key.prefix(40))' twice at \(at.isEmpty ? "one object" : at)") }
      try expect(UInt8(ascii: ":"))
      try member(&self, key)
      switch peek() {
      case UInt8(ascii: ","): index += 1
      case UInt8(ascii: "}"): index += 1; return
      default: throw Failure(description: "not JSON")
      }
    }
  }

  private mutating func array<T>(_ at: String, _ element: (inout CatalogReader) throws(Failure) -> T) throws(Failure) -> [T] {
    guard peek() == UInt8(ascii: "[") else { throw Failure(description: "wrong type at \(at)") }
    index += 1
    var result: [T] = []
    if peek() == UInt8(ascii: "]") { index += 1; return result }
    while true {
      result.append(try element(&self))
      switch peek() {
      case UInt8(ascii: ","): index += 1
      case UInt8(ascii: "]"): index += 1; return result
      default: throw Failure(description: "not JSON")
      }
    }
  }

  /// nil for `null`, else `value`.
  private mutating func nullable<T>(_ value: (inout CatalogReader) throws(Failure) -> T) throws(Failure) -> T? {
    if peek() == UInt8(ascii: "n") {
      try literal("null")
      return nil
    }
    return try value(&self)
  }

  private mutating func string(_ at: String) throws(Failure) -> String {
    guard peek() == UInt8(ascii: "\"") else { throw Failure(description: "wrong type at \(at)") }
    return try rawString()
  }

  /// A string token (the cursor on its opening quote), unescaped; the text
  /// must be valid UTF-8 with no raw control character.
  private mutating func rawString() throws(Failure) -> String {
    index += 1
    let start = index
    // The common case: no escape, one slice.
    while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
      guard bytes[index] >= 0x20 else { throw Failure(description: "not JSON") }
      index += 1
    }
    guard index < bytes.count else { throw Failure(description: "not JSON") }
    var utf8 = Array(bytes[start..<index])
    while bytes[index] == UInt8(ascii: "\\") {
      index += 1
      guard index < bytes.count else { throw Failure(description: "not JSON") }
      let escape = bytes[index]
      index += 1
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
          guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
            throw Failure(description: "not JSON (a lone surrogate)")
          }
          index += 2
          let low = try hex4()
          guard (0xdc00...0xdfff).contains(low) else { throw Failure(description: "not JSON (a lone surrogate)") }
          scalar = 0x10000 + ((scalar - 0xd800) << 10) + (low - 0xdc00)
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw Failure(description: "not JSON (a lone surrogate)") }
        utf8.append(contentsOf: Array(String(Character(unicode)).utf8))
      default: throw Failure(description: "not JSON")
      }
      while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
        guard bytes[index] >= 0x20 else { throw Failure(description: "not JSON") }
        utf8.append(bytes[index])
        index += 1
      }
      guard index < bytes.count else { throw Failure(description: "not JSON") }
    }
    index += 1  // the closing quote
    guard let text = String(validating: utf8, as: UTF8.self) else { throw Failure(description: "not JSON (invalid UTF-8)") }
    return text
  }

  private mutating func hex4() throws(Failure) -> UInt32 {
    guard index + 4 <= bytes.count else { throw Failure(description: "not JSON") }
    var value: UInt32 = 0
    for byte in bytes[index..<(index + 4)] {
      let digit: UInt8
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
      default: throw Failure(description: "not JSON")
      }
      value = value << 4 | UInt32(digit)
    }
    index += 4
    return value
  }

  /// The bytes of a JSON number token (RFC 8259's grammar).
  private mutating func numberToken(_ at: String) throws(Failure) -> ArraySlice<UInt8> {
    guard let first = peek(), first == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
      throw Failure(description: "wrong type at \(at)")
    }
    let start = index
    func digits(_ reader: inout CatalogReader) -> Int {
      let from = reader.index
      while reader.index < reader.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(reader.bytes[reader.index]) { reader.index += 1 }
      return reader.index - from
    }
    if bytes[index] == UInt8(ascii: "-") { index += 1 }
    let leading = index
    guard digits(&self) > 0, bytes[leading] != UInt8(ascii: "0") || index - leading == 1 else { throw Failure(description: "not JSON") }
    if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
      index += 1
      guard digits(&self) > 0 else { throw Failure(description: "not JSON") }
    }
    if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
      index += 1
      if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
      guard digits(&self) > 0 else { throw Failure(description: "not JSON") }
    }
    return bytes[start..<index]
  }

  private mutating func integer(_ at: String) throws(Failure) -> Int {
    let token = try numberToken(at)
    guard let value = Int(String(decoding: token, as: UTF8.self)) else { throw Failure(description: "wrong type at \(at)") }
    return value
  }

  private mutating func number(_ at: String) throws(Failure) -> Double {
    let token = try numberToken(at)
    guard let value = Double(String(decoding: token, as: UTF8.self)), value.isFinite else { throw Failure(description: "bad value at \(at)") }
    return value
  }

  private mutating func bool(_ at: String) throws(Failure) -> Bool {
    switch peek() {
    case UInt8(ascii: "t"): try literal("true"); return true
    case UInt8(ascii: "f"): try literal("false"); return false
    default: throw Failure(description: "wrong type at \(at)")
    }
  }

  private mutating func literal(_ word: String) throws(Failure) {
    let expected = Array(word.utf8)
    guard index + expected.count <= bytes.count, bytes[index..<(index + expected.count)].elementsEqual(expected) else {
      throw Failure(description: "not JSON")
    }
    index += expected.count
  }

  /// Skips any value (a key the catalog format does not know).
  private mutating func skipValue() throws(Failure) {
    switch peek() {
    case UInt8(ascii: "{"): try object("") { (reader: inout CatalogReader, _: String) throws(Failure) in try reader.skipValue() }
    case UInt8(ascii: "["): _ = try array("") { (reader: inout CatalogReader) throws(Failure) in try reader.skipValue() }
    case UInt8(ascii: "\""): _ = try rawString()
    case UInt8(ascii: "t"): try literal("true")
    case UInt8(ascii: "f"): try literal("false")
    case UInt8(ascii: "n"): try literal("null")
    default: _ = try numberToken("")
    }
  }
}
