import Crypto
package import FoundationEssentials
package import ODRBase
import ODRSigning

/// Reads `catalog.json` straight into a ``Catalog``, in one pass over the
/// bytes with odr's one JSON reader (``JSONReader``: strict, depth and size
/// bounded, duplicate keys refused): the decoder of the client's hot path.
/// `JSONDecoder` takes ~20 ms on a 10,000-file catalog; this a fraction.
///
/// It accepts the same catalogs as the synthesized `Codable` conformance
/// with `JSONDecoder` — required keys, `null` for an absent optional,
/// unknown keys skipped, ISO 8601 dates — except that it is stricter:
/// integers must be written as integers (`odr pack` never writes `1.0`); a
/// key may appear once per object; containers nest at most 64 deep; and the
/// whole document must be RFC 8259 JSON. The tests decode catalogs both
/// ways, and thousands of damaged ones, and compare.
///
/// Trust before decode (docs/trust.md): ``header(_:)`` reads what the trust
/// decision needs and skips the tags; ``read(_:)`` decodes the rest only
/// for a catalog the decision admitted.
package enum CatalogReader {
  /// Why a catalog was not read: a short, value-free description and where.
  package typealias Failure = JSONReader.Failure

  /// The catalog, or the reason it is not one.
  package static func read(_ data: Data) throws(Failure) -> Catalog {
    var json = try JSONReader([UInt8](data), limit: Catalog.maxBytes)
    var header = CatalogHeader()
    var tags: [String: Catalog.Tag]?
    try json.object("top level") { (json: inout JSONReader, key: String, _: Int) throws(Failure) in
      if key == "tags" {
        tags = try Self.tags(&json)
      } else {
        try Self.headerField(key, of: &header, from: &json)
      }
    }
    try json.end()
    try header.requireFields(hasTags: tags != nil)
    var catalog = Catalog(bundle: header.bundle, version: header.version, expires: header.expires, signers: header.signers,
                          handovers: header.handovers, tags: tags ?? [:])
    catalog.formatVersion = header.formatVersion
    return catalog
  }

  /// What the trust decision reads before the catalog is decoded: every
  /// top-level field but the tags, which are skipped as strictly as they
  /// would be read; and the digest of everything but `expires`.
  package static func header(_ data: Data) throws(Failure) -> CatalogHeader {
    let bytes = [UInt8](data)
    var json = try JSONReader(bytes, limit: Catalog.maxBytes)
    var header = CatalogHeader()
    var hasTags = false
    var expiresValue: Range<Int>?
    try json.object("top level") { (json: inout JSONReader, key: String, _: Int) throws(Failure) in
      switch key {
      case "tags":
        hasTags = true
        // Depth, syntax and size now; duplicate keys when they are decoded.
        try json.skipValueUncheckedKeys()
      case "expires":
        _ = try json.peek()  // to the value's first byte
        let start = json.offset
        try Self.headerField(key, of: &header, from: &json)
        expiresValue = start..<json.offset
      default:
        try Self.headerField(key, of: &header, from: &json)
      }
    }
    try json.end()
    try header.requireFields(hasTags: hasTags)
    // A re-served version may differ from the accepted one only in the
    // value of `expires` (and its signature lines).
    var hasher = SHA256()
    if let expiresValue {
      hasher.update(data: bytes[..<expiresValue.lowerBound])
      hasher.update(data: bytes[expiresValue.upperBound...])
    } else {
      hasher.update(data: bytes)
    }
    header.digest = FileIO.hex(hasher.finalize())
    return header
  }

  // MARK: The catalog's shape

  private static func headerField(_ key: String, of header: inout CatalogHeader, from json: inout JSONReader) throws(Failure) {
    switch key {
    case "formatVersion": header.formatVersion = try json.integer(key)
    case "bundle": header.bundle = try json.string(key)
    case "version": header.version = try json.integer(key)
    case "expires": header.expires = try json.null() ? nil : try date(&json, key)
    case "signers": header.signers = try json.null() ? nil : try keys(&json, key)
    case "handovers": header.handovers = try json.null() ? nil : try array(&json, key, handover)
    default: try json.skipValue(); return
    }
    header.present.insert(key)
  }

  private static func tags(_ json: inout JSONReader) throws(Failure) -> [String: Catalog.Tag] {
    var tags: [String: Catalog.Tag] = [:]
    try json.object("tags") { (json: inout JSONReader, name: String, _: Int) throws(Failure) in tags[name] = try Self.tag(&json, name) }
    return tags
  }

  private static func tag(_ json: inout JSONReader, _ name: String) throws(Failure) -> Catalog.Tag {
    let at = "tags.\(name)"
    var category: TagCategory?, order: Int?, priority: Double?, secrets: Bool?, encryption: Catalog.Encryption?, files: [Catalog.File]?
    try json.object(at) { (json: inout JSONReader, key: String, _: Int) throws(Failure) in
      switch key {
      case "category":
        let offset = json.offset
        guard let value = TagCategory(rawValue: try json.string(key)) else { throw Failure(.shape, at: offset, "bad value at \(at).category") }
        category = value
      case "order": order = try json.integer(key)
      case "preservationPriority": priority = try json.number(key)
      case "secrets": secrets = try json.bool(key)
      case "encryption": encryption = try json.null() ? nil : try Self.encryption(&json, at)
      case "files": files = try Self.array(&json, key) { (json: inout JSONReader) throws(Failure) in try Self.file(&json, at) }
      default: try json.skipValue()
      }
    }
    guard let category else { throw missing("category", at: at, json) }
    guard let order else { throw missing("order", at: at, json) }
    guard let priority else { throw missing("preservationPriority", at: at, json) }
    guard let secrets else { throw missing("secrets", at: at, json) }
    guard let files else { throw missing("files", at: at, json) }
    return Catalog.Tag(category: category, order: order, preservationPriority: priority, secrets: secrets, encryption: encryption, files: files)
  }

  private static func file(_ json: inout JSONReader, _ at: String) throws(Failure) -> Catalog.File {
    var path: String?, size: Int64?, sha256: String?
    try json.object("\(at).files") { (json: inout JSONReader, key: String, _: Int) throws(Failure) in
      switch key {
      case "path": path = try json.string(key)
      case "size": size = Int64(try json.integer(key))
      case "sha256": sha256 = try json.string(key)
      default: try json.skipValue()
      }
    }
    guard let path, let size, let sha256 else { throw missing(path == nil ? "path" : size == nil ? "size" : "sha256", at: "\(at).files", json) }
    return Catalog.File(path: path, size: size, sha256: sha256)
  }

  private static func encryption(_ json: inout JSONReader, _ at: String) throws(Failure) -> Catalog.Encryption {
    var scheme: String?, recipients: Int?
    try json.object("\(at).encryption") { (json: inout JSONReader, key: String, _: Int) throws(Failure) in
      switch key {
      case "scheme": scheme = try json.string(key)
      case "recipients": recipients = try json.integer(key)
      default: try json.skipValue()
      }
    }
    guard let scheme, let recipients else { throw missing(scheme == nil ? "scheme" : "recipients", at: "\(at).encryption", json) }
    return Catalog.Encryption(scheme: scheme, recipients: recipients)
  }

  private static func handover(_ json: inout JSONReader) throws(Failure) -> Handover {
    var version: Int?, signers: [VerifyingKey]?, signedBy: VerifyingKey?, signature: String?
    try json.object("handovers") { (json: inout JSONReader, key: String, _: Int) throws(Failure) in
      switch key {
      case "version": version = try json.integer(key)
      case "signers": signers = try Self.keys(&json, key)
      case "signedBy": signedBy = try Self.key(&json, key)
      case "signature": signature = try json.string(key)
      default: try json.skipValue()
      }
    }
    guard let version, let signers, let signedBy, let signature else { throw missing("version, signers, signedBy or signature", at: "handovers", json) }
    return Handover(version: version, signers: signers, signedBy: signedBy, signature: signature)
  }

  private static func array<T>(_ json: inout JSONReader, _ at: String, _ element: (inout JSONReader) throws(Failure) -> T) throws(Failure) -> [T] {
    var result: [T] = []
    try json.array(at) { (json: inout JSONReader) throws(Failure) in result.append(try element(&json)) }
    return result
  }

  private static func keys(_ json: inout JSONReader, _ at: String) throws(Failure) -> [VerifyingKey] {
    try array(&json, at) { (json: inout JSONReader) throws(Failure) in try key(&json, at) }
  }

  private static func key(_ json: inout JSONReader, _ at: String) throws(Failure) -> VerifyingKey {
    let offset = json.offset
    let text = try json.string(at)
    do { return try VerifyingKey(text) } catch { throw Failure(.shape, at: offset, "bad value at \(at)") }
  }

  private static func date(_ json: inout JSONReader, _ at: String) throws(Failure) -> Date {
    let offset = json.offset
    let text = try json.string(at)
    do { return try Date(text, strategy: .iso8601) } catch { throw Failure(.shape, at: offset, "bad value at \(at)") }
  }

  private static func missing(_ key: String, at place: String, _ json: JSONReader) -> Failure {
    Failure(.shape, at: json.offset, "missing '\(key)' at \(place)")
  }
}
