public import FoundationEssentials
import ODRBase
public import ODRSigning
import Synchronization

/// A published catalog (`catalog.json`, docs/design.md, "The published catalog"): which tags exist and
/// which content-addressed blobs make up each tag's files.
///
/// Blob URLs are `blobs/<sha256>` relative to the catalog's URL, so a
/// catalog folder can be served by any static host.
public struct Catalog: Codable, Sendable, Equatable {
  /// The largest catalog.json accepted.
  public static let maxBytes = 4 << 20

  /// The catalog format this code writes when every signing key is
  /// Ed25519: 2 (signatures over a domain prefix, hand-over chains). A
  /// catalog any hybrid post-quantum key signs is format 3
  /// (``CatalogSignature/postQuantumFormat``). Format 1 is still read.
  public static let currentFormatVersion = 2
  /// The formats this code reads.
  public static let readableFormatVersions = 1...3
  /// Counts every decode within its scope: a spy for the tests that show a
  /// tampered catalog is refused before anything decodes it. (A class, not
  /// an optional closure: with the closure, the release build with
  /// -enable-testing crashed in swift_task_localValuePush.)
  @TaskLocal package static var decodeSpy: DecodeSpy?

  /// What ``decodeSpy`` counts.
  package final class DecodeSpy: Sendable {
    private let count = Mutex(0)
    package init() {}
    /// The decodes so far.
    package var decodes: Int { count.withLock { $0 } }
    package func record() { count.withLock { $0 += 1 } }
  }
  /// The largest file a catalog may list (1 TiB): with the 4 MiB cap on
  /// catalog.json, no sum of sizes can overflow.
  public static let maxFileSize: Int64 = 1 << 40

  /// One file of a tag.
  public struct File: Codable, Sendable, Equatable {
    /// Relative path inside the tag, with `/` separators.
    public var path: String
    /// Size in bytes.
    public var size: Int64
    /// Lowercase hex SHA-256 of the bytes; also the blob's name.
    public var sha256: String

    public init(path: String, size: Int64, sha256: String) {
      self.path = path
      self.size = size
      self.sha256 = sha256
    }
  }

  /// One tag: its category, ordering, purge priority and files.
  public struct Tag: Codable, Sendable, Equatable {
    public var category: TagCategory
    /// Order among `prefetch` tags (lower first).
    public var order: Int
    /// 0…1; lower is purged first (Apple's preservation priority).
    public var preservationPriority: Double
    /// Whether the tag's files are API keys documents (`odr fetch` imports them).
    public var secrets: Bool
    /// How the files are encrypted (nil: published in plaintext). Sizes
    /// and hashes of `files` are those of the ciphertext.
    public var encryption: Encryption?
    public var files: [File]

    public init(category: TagCategory, order: Int = 0, preservationPriority: Double = 0.5, secrets: Bool = false,
                encryption: Encryption? = nil, files: [File]) {
      self.category = category
      self.order = order
      self.preservationPriority = preservationPriority
      self.secrets = secrets
      self.encryption = encryption
      self.files = files
    }

    /// Total bytes of the tag's files (validation caps each file at
    /// ``Catalog/maxFileSize``, so the sum cannot overflow).
    public var size: Int64 { files.reduce(0) { $0 &+ $1.size } }
  }

  /// How a tag's files are encrypted: `age-v1` to `recipients` X25519
  /// recipients (their keys are not published, only how many).
  public struct Encryption: Codable, Sendable, Equatable {
    /// The only scheme: the age v1 format.
    public static let ageV1 = "age-v1"
    public var scheme: String
    public var recipients: Int

    public init(scheme: String = Self.ageV1, recipients: Int) {
      self.scheme = scheme
      self.recipients = recipients
    }
  }

  public var formatVersion: Int
  /// The bundle id the catalog belongs to (the keyring's `service`).
  public var bundle: String
  /// Set by the publisher, increasing; clients refuse older catalogs.
  public var version: Int
  /// After this instant clients refuse the catalog when they fetch it (the
  /// publisher must re-sign); nil: it does not expire.
  public var expires: Date?
  /// The keys allowed to sign the next versions (key rotation).
  public var signers: [VerifyingKey]?
  /// The chain of hand-over statements from earlier signer sets to the one
  /// that signed this catalog (format 2), for clients that keep no state.
  public var handovers: [Handover]?
  public var tags: [String: Tag]

  public init(bundle: String, version: Int, expires: Date? = nil, signers: [VerifyingKey]? = nil, handovers: [Handover]? = nil,
              tags: [String: Tag]) {
    self.formatVersion = Self.currentFormatVersion
    self.bundle = bundle
    self.version = version
    self.expires = expires
    self.signers = signers
    self.handovers = handovers
    self.tags = tags
  }

  /// Decodes and validates a catalog; nothing unsafe survives this.
  public static func decode(_ data: Data) throws -> Catalog {
    decodeSpy?.record()
    let catalog: Catalog
    do { catalog = try CatalogReader.read(data) } catch {
      throw ResourceError(.invalidSource, "The catalog is not a valid catalog.json: \(error.message).")
    }
    try catalog.validate()
    return catalog
  }

  /// The catalog as stable JSON: sorted keys, so the same input gives the
  /// same bytes.
  public func encoded() -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    // Encoding plain value types cannot fail.
    return (dropping(.cannotFail) { try encoder.encode(self) }) ?? Data()
  }

  /// Checks every rule a client relies on before it writes anything:
  /// known format, valid names, safe relative paths, well-formed hashes.
  public func validate() throws {
    guard Self.readableFormatVersions.contains(formatVersion) else {
      throw ResourceError(.invalidSource, "The catalog has format version \(formatVersion); this odr reads versions \(Self.readableFormatVersions.lowerBound) to \(Self.readableFormatVersions.upperBound). Update odr.")
    }
    guard formatVersion >= 2 || handovers == nil else {
      throw ResourceError(.invalidSource, "The catalog has hand-overs but format version \(formatVersion); they need format 2.")
    }
    guard BundleID.isValid(bundle) else {
      throw ResourceError(.invalidSource, "The catalog's bundle '\(bundle.prefix(80))\(bundle.count > 80 ? "…" : "")' is not a bundle id (1–255 letters, digits, '.', '_', '-').")
    }
    guard !BundleID.isReserved(bundle) else {
      throw ResourceError(.invalidSource, "The catalog claims the bundle '\(bundle)', a name reserved for odr's own keyring services (private keys); odr never imports into them. The catalog is refused.")
    }
    guard version >= 1 else { throw ResourceError(.invalidSource, "The catalog's version must be 1 or more, not \(version).") }
    for (name, tag) in tags {
      try Naming.validate(tag: name)
      guard (0...1).contains(tag.preservationPriority) else {
        throw ResourceError(.invalidSource, "Tag '\(name)' has preservationPriority \(tag.preservationPriority); it must be between 0 and 1.")
      }
      if let encryption = tag.encryption {
        guard encryption.scheme == Encryption.ageV1, encryption.recipients >= 1, tag.secrets else {
          throw ResourceError(.invalidSource, "Tag '\(name)' has an unknown encryption (scheme '\(encryption.scheme.prefix(40))'); this odr reads age-v1 secrets tags. Update odr.")
        }
      }
      var seen = Set<String>()
      for file in tag.files {
        try Naming.validate(path: file.path, in: name)
        guard seen.insert(file.path).inserted else {
          throw ResourceError(.invalidSource, "Tag '\(name)' lists '\(file.path)' twice.")
        }
        guard Naming.isSHA256Hex(file.sha256) else {
          throw ResourceError(.invalidSource, "File '\(file.path)' of tag '\(name)' has a malformed sha256 (64 lowercase hex digits expected).")
        }
        guard (0...Self.maxFileSize).contains(file.size) else {
          throw ResourceError(.invalidSource, "File '\(file.path)' of tag '\(name)' has size \(file.size); sizes are 0 to \(Self.maxFileSize) bytes.")
        }
      }
    }
  }
}

/// A short, value-free description of a decoding error.
package func DecodingErrorDescription(_ error: any Error) -> String {
  guard let error = error as? DecodingError else { return "not JSON" }
  func path(_ context: DecodingError.Context) -> String {
    let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
    return keys.isEmpty ? "top level" : keys.joined(separator: ".")
  }
  switch error {
  case .keyNotFound(let key, let context): return "missing '\(key.stringValue)' at \(path(context))"
  case .typeMismatch(_, let context), .valueNotFound(_, let context): return "wrong type at \(path(context))"
  case .dataCorrupted(let context): return context.codingPath.isEmpty ? "not JSON" : "bad value at \(path(context))"
  @unknown default: return "invalid"
  }
}
