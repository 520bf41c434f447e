public import FoundationEssentials
import ODRBase
public import ODRCatalog

/// A publisher folder's `tags.json` (docs/design.md, "The publisher's folder"), read strictly: unknown
/// fields and categories are errors, so a typo never goes unnoticed.
public struct PublisherManifest: Sendable {
  /// One tag as the publisher wrote it.
  public struct TagSpec: Sendable {
    public var category: TagCategory
    public var order: Int
    public var preservationPriority: Double
    public var secrets: Bool
    /// The age recipients (`age1…`) a secrets tag is encrypted to.
    public var recipients: [String]
    /// Files and folders (ending in `/`), relative to the publisher folder.
    public var files: [String]
  }

  public var bundle: String
  public var version: Int?
  /// The largest tags.json read.
  static let maxBytes = 4 << 20
  public var tags: [String: TagSpec]

  /// Parses and validates `tags.json`; every error names the line and
  /// column it is about (`tags.json:4:7: …`).
  public static func decode(_ data: Data) throws -> PublisherManifest {
    let bytes = [UInt8](data)
    func invalid(_ offset: Int?, _ message: String) -> ResourceError {
      let place = offset.map { JSONReader.position(of: $0, in: bytes) }.map { "tags.json:\($0.line):\($0.column)" } ?? "tags.json"
      return ResourceError(.invalidSource, "\(place): \(message)")
    }
    let keys: [JSONReader.Key]
    do { keys = try JSONReader.keys(of: bytes, limit: maxBytes) } catch {
      switch error.kind {
      case .syntax: throw invalid(error.offset, "\(error.message). tags.json is JSON: {\"bundle\": \"com.example.app\", \"tags\": {…}}.")
      case .duplicateKey: throw invalid(error.offset, "\(error.message); names must be unique.")
      default: throw invalid(error.offset, "\(error.message).")
      }
    }
    /// Where the key at `path` (object keys only, the last one its name) is.
    func offset(_ path: [String]) -> Int? {
      keys.first { $0.path == path.dropLast() && $0.name == path.last }?.offset
    }
    for key in keys where key.path.isEmpty || key.path.count == 2 && key.path[0] == "tags" {
      let (known, place) = key.path.isEmpty ? (Raw.fields, "the top level") : (RawTag.fields, "tag '\(key.path[1])'")
      guard !known.contains(key.name) else { continue }
      let guess = NameSuggestion.closest(to: key.name, among: known).map { " Did you mean '\($0)'?" } ?? ""
      throw invalid(key.offset, "unknown field '\(key.name.prefix(60))' in \(place).\(guess) Known fields: \(known.joined(separator: ", ")).")
    }
    let raw: Raw
    do { raw = try JSONDecoder().decode(Raw.self, from: data) } catch {
      let codingPath: [any CodingKey]
      switch error as? DecodingError {
      case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?, .dataCorrupted(let context)?, .keyNotFound(_, let context)?:
        codingPath = context.codingPath
      default: codingPath = []
      }
      throw invalid(offset(codingPath.filter { $0.intValue == nil }.map(\.stringValue)), "not valid: \(DecodingErrorDescription(error)).")
    }
    guard BundleID.isValid(raw.bundle) else {
      throw invalid(offset(["bundle"]), "bundle '\(raw.bundle)' is not a bundle id (letters, digits, '.', '_', '-').")
    }
    if let version = raw.version, version < 1 { throw invalid(offset(["version"]), "version must be 1 or more.") }
    var tags: [String: TagSpec] = [:]
    var lowercased: [String: String] = [:]
    for (name, spec) in raw.tags.sorted(by: { $0.key < $1.key }) {
      try Naming.validate(tag: name)
      if let other = lowercased.updateValue(name, forKey: name.lowercased()) {
        throw invalid(offset(["tags", name]), "tags '\(other)' and '\(name)' differ only in case; tag names must be unique.")
      }
      guard let category = TagCategory(rawValue: spec.category) else {
        throw invalid(offset(["tags", name, "category"]), "tag '\(name)' has unknown category '\(spec.category)'; use initial, prefetch or onDemand.")
      }
      let priority = spec.preservationPriority ?? 0.5
      guard (0...1).contains(priority) else {
        throw invalid(offset(["tags", name, "preservationPriority"]), "tag '\(name)' has preservationPriority \(priority); it must be between 0 and 1.")
      }
      guard !spec.files.isEmpty else { throw invalid(offset(["tags", name, "files"]), "tag '\(name)' lists no files.") }
      if spec.recipients?.isEmpty == false && spec.secrets != true {
        throw invalid(offset(["tags", name, "recipients"]), "tag '\(name)' lists recipients but is not a secrets tag; only secrets tags are encrypted.")
      }
      tags[name] = TagSpec(category: category, order: spec.order ?? 0, preservationPriority: priority,
                           secrets: spec.secrets ?? false, recipients: spec.recipients ?? [], files: spec.files)
    }
    return PublisherManifest(bundle: raw.bundle, version: raw.version, tags: tags)
  }

  // The JSON shape; unknown keys are refused before decoding, by position.
  private struct Raw: Decodable {
    var bundle: String
    var version: Int?
    var tags: [String: RawTag]

    static let fields = ["bundle", "version", "tags"]
  }

  private struct RawTag: Decodable {
    var category: String
    var order: Int?
    var preservationPriority: Double?
    var secrets: Bool?
    var recipients: [String]?
    var files: [String]

    static let fields = ["category", "order", "preservationPriority", "secrets", "recipients", "files"]
  }
}
