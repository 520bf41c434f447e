public import FoundationEssentials
import Crypto
#if canImport(Glibc)
import Glibc
#endif

/// `odr pack`: turns a publisher folder into a static catalog folder
/// (DESIGN §3.2): `catalog.json` plus content-addressed `blobs/<sha256>`.
///
/// Packing the same folder twice gives byte-identical output. A bad folder
/// (missing file, unknown category, invalid or colliding tag names, a path
/// leaving the folder, a symlink) is refused before anything is written.
public struct Publisher: Sendable {
  /// The publisher folder, holding `tags.json`.
  public let source: URL

  public init(source: URL) {
    self.source = source
  }

  /// Reads the folder, hashes every tagged file, and writes the catalog to
  /// `output`. `version` overrides the one in `tags.json` (default 1).
  @discardableResult
  public func pack(to output: URL, version: Int? = nil) throws -> Catalog {
    let catalog = try makeCatalog(version: version)
    let blobs = output.appending(path: "blobs")
    try FileIO.makeDirectory(blobs)
    var written = Set<String>()
    for tag in catalog.tags.values {
      for file in tag.files where written.insert(file.sha256).inserted {
        let blob = blobs.appending(path: file.sha256)
        if FileIO.size(of: blob) == file.size { continue }  // content-addressed: already there
        try FileIO.atomicCopy(from: source.appending(path: file.path), to: blob)
      }
    }
    try FileIO.atomicWrite(catalog.encoded(), to: output.appending(path: "catalog.json"))
    return catalog
  }

  /// The catalog for the folder, without writing anything.
  public func makeCatalog(version: Int? = nil) throws -> Catalog {
    let manifestURL = source.appending(path: "tags.json")
    guard let data = try? Data(contentsOf: manifestURL) else {
      throw ResourceError(.notFound, "No tags.json in '\(source.path)'. A publisher folder holds tags.json and the files it tags (see README).")
    }
    let manifest = try PublisherManifest.decode(data)
    var tags: [String: Catalog.Tag] = [:]
    var hashes: [String: (size: Int64, sha256: String)] = [:]
    for (name, spec) in manifest.tags {
      var files: [Catalog.File] = []
      for path in try expand(spec.files, tag: name) {
        let digest: (size: Int64, sha256: String)
        if let known = hashes[path] { digest = known } else {
          digest = try FileIO.sha256(of: source.appending(path: path))
          hashes[path] = digest
        }
        files.append(Catalog.File(path: path, size: digest.size, sha256: digest.sha256))
      }
      tags[name] = Catalog.Tag(category: spec.category, order: spec.order, preservationPriority: spec.preservationPriority,
                               secrets: spec.secrets, files: files)
    }
    let catalog = Catalog(bundle: manifest.bundle, version: version ?? manifest.version ?? 1, tags: tags)
    try catalog.validate()
    return catalog
  }

  /// The regular files an entry list names: files as they are, folders
  /// (written with or without a trailing `/`) recursively; sorted, unique.
  private func expand(_ entries: [String], tag: String) throws -> [String] {
    var result = Set<String>()
    for entry in entries {
      let path = entry.hasSuffix("/") ? String(entry.dropLast()) : entry
      try Naming.validate(path: path, in: tag)
      try FileIO.refuseSymlinks(along: path, under: source, tag: tag)
      switch FileIO.kind(of: source.appending(path: path)) {
      case .file: result.insert(path)
      case .directory: result.formUnion(try FileIO.regularFiles(under: path, in: source, tag: tag))
      case .missing:
        throw ResourceError(.notFound, "Tag '\(tag)' lists '\(entry)', which is not in '\(source.path)'.")
      case .other:
        throw ResourceError(.invalidSource, "Tag '\(tag)' lists '\(entry)', which is neither a regular file nor a folder.")
      }
    }
    return result.sorted()
  }
}
