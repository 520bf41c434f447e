import ODRBase
public import FoundationEssentials
import ODRCatalog
public import ODRTransports
import ODRSigning

/// The catalog a pack replaces, named by `odr pack --previous`: a folder,
/// or the published catalog read from its host as `odr verify` reads it.
public struct PreviousCatalog: Sendable {
  /// Where it came from, for messages (a path or a URL).
  public let origin: String
  /// `catalog.json`'s bytes; nil when the place holds no catalog yet (a
  /// first publish).
  public let bytes: Data?
  /// Whether a `catalog.json.sig` lies beside it.
  public let signed: Bool

  init(origin: String, bytes: Data?, signed: Bool) {
    self.origin = origin
    self.bytes = bytes
    self.signed = signed
  }

  /// The catalog in `folder`, which must exist: a folder that is not there
  /// is a typo, not a first publish.
  public static func folder(_ folder: URL) throws -> PreviousCatalog {
    try Self.folder(folder, required: true)
  }

  /// The catalog in `folder`; with `required` false (the output folder) a
  /// folder that is not there yet holds none.
  static func folder(_ folder: URL, required: Bool) throws -> PreviousCatalog {
    guard !required || FileIO.kind(of: folder) == .directory else {
      throw ResourceError(.notFound, "The previous catalog's folder '\(folder.path)' does not exist (or is not a folder). Nothing was written. Give the folder the published catalog was packed into, or its URL.")
    }
    let file = folder.appending(path: "catalog.json")
    let bytes: Data?
    switch FileIO.kind(of: file) {
    case .missing: bytes = nil
    default:
      // bounded as every catalog read is; its own message names the file
      bytes = try FileTransport().dataSync(at: file, limit: Catalog.maxBytes)
    }
    return PreviousCatalog(origin: folder.path, bytes: bytes, signed: FileIO.kind(of: folder.appending(path: "catalog.json.sig")) == .file)
  }

  /// The catalog published at `location` (its folder URL), read through
  /// `transport`; a location that serves no catalog.json yet holds none.
  public static func published(at location: URL, transport: any BlobTransport) async throws -> PreviousCatalog {
    let folder = location.pathExtension == "json" ? location.deletingLastPathComponent() : location
    let bytes = try await transport.dataIfPresent(at: folder.appending(path: "catalog.json"), limit: Catalog.maxBytes)
    let signature = bytes == nil ? nil : try await transport.dataIfPresent(at: folder.appending(path: "catalog.json.sig"), limit: CatalogSignature.maxBytes)
    return PreviousCatalog(origin: location.absoluteString, bytes: bytes, signed: signature != nil)
  }
}
