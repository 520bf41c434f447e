public import FoundationEssentials
import ODRBase

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
  public var tags: [String: TagSpec]

  /// Parses and validates `tags.json`.
  public static func decode(_ data: Data) throws -> PublisherManifest {
    if let duplicate = StrictJSON.firstDuplicateKey(in: data) {
      let place = duplicate.path.isEmpty ? "the top level" : duplicate.path.joined(separator: ".")
      throw ResourceError(.invalidSource, "tags.json: '\(duplicate.key.prefix(60))' appears twice in \(place); names must be unique.")
    }
    let raw: Raw
    do { raw = try JSONDecoder().decode(Raw.self, from: data) } catch let error as ResourceError {
      throw error
    } catch {
      throw ResourceError(.invalidSource, "tags.json is not valid: \(DecodingErrorDescription(error)).")
    }
    guard BundleID.isValid(raw.bundle) else {
      throw ResourceError(.invalidSource, "tags.json: bundle '\(raw.bundle)' is not a bundle id (letters, digits, '.', '_', '-').")
    }
    if let version = raw.version, version < 1 { throw ResourceError(.invalidSource, "tags.json: version must be 1 or more.") }
    var tags: [String: TagSpec] = [:]
    var lowercased: [String: String] = [:]
    for (name, spec) in raw.tags {
      try Naming.validate(tag: name)
      if let other = lowercased.updateValue(name, forKey: name.lowercased()) {
        throw ResourceError(.invalidSource, "tags.json: tags '\(other)' and '\(name)' differ only in case; tag names must be unique.")
      }
      guard let category = TagCategory(rawValue: spec.category) else {
        throw ResourceError(.invalidSource, "tags.json: tag '\(name)' has unknown category '\(spec.category)'; use initial, prefetch or onDemand.")
      }
      let priority = spec.preservationPriority ?? 0.5
      guard (0...1).contains(priority) else {
        throw ResourceError(.invalidSource, "tags.json: tag '\(name)' has preservationPriority \(priority); it must be between 0 and 1.")
      }
      guard !spec.files.isEmpty else { throw ResourceError(.invalidSource, "tags.json: tag '\(name)' lists no files.") }
      if spec.recipients?.isEmpty == false && spec.secrets != true {
        throw ResourceError(.invalidSource, "tags.json: tag '\(name)' lists recipients but is not a secrets tag; only secrets tags are encrypted.")
      }
      tags[name] = TagSpec(category: category, order: spec.order ?? 0, preservationPriority: priority,
                           secrets: spec.secrets ?? false, recipients: spec.recipients ?? [], files: spec.files)
    }
    return PublisherManifest(bundle: raw.bundle, version: raw.version, tags: tags)
  }

  // The JSON shape, with unknown keys refused.
  private struct Raw: Decodable {
    var bundle: String
    var version: Int?
    var tags: [String: RawTag]

    enum CodingKeys: String, CodingKey, CaseIterable { case bundle, version, tags }

    init(from decoder: any Decoder) throws {
      try rejectUnknownKeys(decoder, known: CodingKeys.allCases.map(\.rawValue), where: "the top level")
      let container = try decoder.container(keyedBy: CodingKeys.self)
      bundle = try container.decode(String.self, forKey: .bundle)
      version = try container.decodeIfPresent(Int.self, forKey: .version)
      tags = try container.decode([String: RawTag].self, forKey: .tags)
    }
  }

  private struct RawTag: Decodable {
    var category: String
    var order: Int?
    var preservationPriority: Double?
    var secrets: Bool?
    var recipients: [String]?
    var files: [String]

    enum CodingKeys: String, CodingKey, CaseIterable { case category, order, preservationPriority, secrets, recipients, files }

    init(from decoder: any Decoder) throws {
      let tag = decoder.codingPath.last?.stringValue ?? "?"
      try rejectUnknownKeys(decoder, known: CodingKeys.allCases.map(\.rawValue), where: "tag '\(tag)'")
      let container = try decoder.container(keyedBy: CodingKeys.self)
      category = try container.decode(String.self, forKey: .category)
      order = try container.decodeIfPresent(Int.self, forKey: .order)
      preservationPriority = try container.decodeIfPresent(Double.self, forKey: .preservationPriority)
      secrets = try container.decodeIfPresent(Bool.self, forKey: .secrets)
      recipients = try container.decodeIfPresent([String].self, forKey: .recipients)
      files = try container.decode([String].self, forKey: .files)
    }
  }
}

private struct AnyKey: CodingKey {
  var stringValue: String
  var intValue: Int? { nil }
  init(stringValue: String) { self.stringValue = stringValue }
  init?(intValue: Int) { nil }
}

private func rejectUnknownKeys(_ decoder: any Decoder, known: [String], where place: String) throws {
  let keys = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue)
  if let unknown = keys.sorted().first(where: { !known.contains($0) }) {
    throw ResourceError(.invalidSource, "tags.json: unknown field '\(unknown.prefix(60))' in \(place); known fields: \(known.joined(separator: ", ")).")
  }
}
