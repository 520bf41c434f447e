import ODRBase
public import FoundationEssentials
import ODRCatalog
import ODRTransports
#if canImport(Glibc)
import Glibc
#endif

/// Where `odr publish` puts a published catalog folder: a folder, or an S3
/// bucket (ODRHTTP's `S3Destination`). Paths are relative to the
/// destination (`catalog.json`, `blobs/<sha256>`). Each upload must be
/// atomic: a reader sees the old object or the new one, never a part.
public protocol PublishDestination: Sendable {
  /// The destination as the user named it.
  var name: String { get }
  /// The size of the object at `path`, nil when there is none.
  func size(of path: String) async throws -> Int64?
  /// The object at `path` (at most `limit` bytes), nil when there is none.
  func read(_ path: String, limit: Int) async throws -> Data?
  /// Uploads `file` (whose SHA-256 is `sha256`) to `path`.
  func upload(_ file: URL, sha256: String, to path: String, cacheControl: String) async throws
  /// Uploads `data` to `path`.
  func upload(_ data: Data, to path: String, cacheControl: String) async throws
  /// Deletes the object at `path` (nothing when there is none).
  func delete(_ path: String) async throws
  /// The names of the blobs at the destination (`blobs/<sha256>`: the
  /// 64-hex names only), for `odr publish --prune`.
  func blobs() async throws -> [String]
}

extension PublishDestination {
  /// Whether `name` is a blob's name: 64 lower-case hex digits.
  public static func isBlobName(_ name: some StringProtocol) -> Bool { Naming.isSHA256Hex(String(name)) }
}

/// A folder as a destination (a web server's document root, a mounted
/// share): files written to a temporary name and renamed into place.
/// `Cache-Control` is the web server's business there.
public struct FolderDestination: PublishDestination {
  public let folder: URL

  public init(_ folder: URL) { self.folder = folder }

  public var name: String { folder.path }

  public func size(of path: String) async throws -> Int64? { FileIO.size(of: folder.appending(path: path)) }

  public func read(_ path: String, limit: Int) async throws -> Data? {
    let url = folder.appending(path: path)
    guard FileIO.kind(of: url) == .file else { return nil }
    return try FileTransport().dataSync(at: url, limit: limit)
  }

  public func upload(_ file: URL, sha256: String, to path: String, cacheControl: String) async throws {
    let target = folder.appending(path: path)
    try makeFolder(target.deletingLastPathComponent())
    // A name of its own: two publishes into one folder never write, rename
    // or delete each other's half-written file.
    let temporary = target.deletingLastPathComponent().appending(path: ".\(target.lastPathComponent).odr-publish-\(getpid())-\(UInt64.random(in: 0...UInt64.max))")
    var written = false
    defer { if !written { unlink(temporary.path) } }
    let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw FileIO.error("Cannot create '\(temporary.path)'") }
    do {
      try FileIO.readChunks(of: file) { try FileIO.writeAll(fd, $0, path: temporary.path) }
      guard fsync(fd) == 0 else { throw FileIO.error("Cannot write '\(temporary.path)'") }
    } catch {
      close(fd)
      throw error
    }
    close(fd)
    guard rename(temporary.path, target.path) == 0 else { throw FileIO.error("Cannot publish '\(target.path)'") }
    written = true
    FileIO.syncDirectory(target.deletingLastPathComponent())
  }

  /// Writes the small documents (catalog.json, its signature); each one's
  /// modification time moves on by at least a second, so a web server's
  /// validators change with it.
  public func upload(_ data: Data, to path: String, cacheControl: String) async throws {
    let target = folder.appending(path: path)
    try makeFolder(target.deletingLastPathComponent())
    try FileIO.atomicWriteChangingValidator(data, to: target)
  }

  public func blobs() async throws -> [String] {
    let names: [String]
    do { names = try FileManager.default.contentsOfDirectory(atPath: folder.appending(path: "blobs").path) } catch {
      guard FileIO.kind(of: folder.appending(path: "blobs")) == .missing else { throw ResourceError(.io, "Cannot list '\(folder.path)/blobs': \(error).") }
      return []
    }
    return names.filter { Self.isBlobName($0) }.sorted()
  }

  public func delete(_ path: String) async throws {
    guard unlink(folder.appending(path: path).path) == 0 || errno == ENOENT else {
      throw FileIO.error("Cannot delete '\(folder.appending(path: path).path)'")
    }
  }

  /// Published folders are for every reader of the host: created with the
  /// usual mode (0755 under the common umask), not odr's private 0700.
  private func makeFolder(_ url: URL) throws {
    do { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) } catch {
      throw ResourceError(.io, "Cannot create the folder '\(url.path)': \(error). Check the destination.")
    }
  }
}
