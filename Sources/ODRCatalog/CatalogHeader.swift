public import FoundationEssentials
import ODRBase
public import ODRSigning

/// What the trust decision reads of a catalog before anything else of it is
/// decoded (docs/trust.md, "Trust before decode"): its format, bundle,
/// version, expiry, next signers and hand-over chain — never its tags — and
/// the digest that tells whether a re-served version is the accepted one.
public struct CatalogHeader: Equatable, Sendable {
  public var formatVersion = 0
  public var bundle = ""
  public var version = 0
  public var expires: Date?
  public var signers: [VerifyingKey]?
  public var handovers: [Handover]?
  /// SHA-256 (hex) of catalog.json's bytes without the value of `expires`:
  /// what must be equal for a version to be served again.
  public var digest = ""
  /// The fields the document had (required ones are checked).
  package var present: Set<String> = []

  public init() {}

  /// A header as a test or a table writes it.
  public init(bundle: String, version: Int, expires: Date? = nil, signers: [VerifyingKey]? = nil, handovers: [Handover]? = nil,
              digest: String = "", formatVersion: Int = Catalog.currentFormatVersion) {
    self.formatVersion = formatVersion
    self.bundle = bundle
    self.version = version
    self.expires = expires
    self.signers = signers
    self.handovers = handovers
    self.digest = digest
  }

  /// Reads the header of `data` (bounded, strict); throws `.invalidSource`.
  public static func read(_ data: Data) throws -> CatalogHeader {
    Catalog.decodeSpy?.record()
    let header: CatalogHeader
    do { header = try CatalogReader.header(data) } catch {
      throw ResourceError(.invalidSource, "The catalog is not a valid catalog.json: \(error.message).")
    }
    try header.validate()
    return header
  }

  /// The format, the bundle id and the version: what is checked before the
  /// decision (the tags are checked by ``Catalog/validate()`` after it).
  package func validate() throws {
    var probe = Catalog(bundle: bundle, version: version, handovers: handovers, tags: [:])
    probe.formatVersion = formatVersion
    try probe.validate()
  }

  package func requireFields(hasTags: Bool) throws(CatalogReader.Failure) {
    for key in ["formatVersion", "bundle", "version"] where !present.contains(key) {
      throw CatalogReader.Failure(.shape, at: 0, "missing '\(key)' at top level")
    }
    guard hasTags else { throw CatalogReader.Failure(.shape, at: 0, "missing 'tags' at top level") }
  }
}
