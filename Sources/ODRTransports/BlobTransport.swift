import ODRBase
public import FoundationEssentials
public import ODRCatalog

/// Where catalogs and blobs come from. The store verifies everything a
/// transport delivers; a transport only moves bytes.
public protocol BlobTransport: Sendable {
  /// The bytes at `url`, at most `limit` of them (a catalog).
  func data(at url: URL, limit: Int) async throws -> Data
  /// Like ``data(at:limit:)``, but nil when nothing is there (a catalog's
  /// optional signature).
  func dataIfPresent(at url: URL, limit: Int) async throws -> Data?
  /// The document at `url` (at most `limit` bytes), or `.notModified` when
  /// `validators` (from an earlier fetch) still match it.
  func document(at url: URL, limit: Int, unless validators: CacheValidators?) async throws -> FetchedDocument
  /// Streams the bytes at `url` into `sink`, chunk by chunk, so memory stays
  /// constant whatever the size. Must stop with `CancellationError` when
  /// the task is cancelled.
  func stream(_ url: URL, into sink: (UnsafeRawBufferPointer) throws -> Void) async throws
  /// Streams the bytes at `url` from `resume.offset` when the source can and
  /// the validators still match; otherwise from the start. `start` learns,
  /// before the first byte reaches `sink`, the offset the bytes begin at
  /// (`resume.offset` or 0) and the validators of this response.
  func stream(_ url: URL, resume: ResumePoint?, start: (Int64, CacheValidators) throws -> Void,
              into sink: (UnsafeRawBufferPointer) throws -> Void) async throws
  /// Says that what `url` delivered was damaged (a hash mismatch). True
  /// when another source may be tried: mirrors skip the one that served it.
  func reportDamaged(_ url: URL) async -> Bool
}

extension BlobTransport {
  public func dataIfPresent(at url: URL, limit: Int) async throws -> Data? {
    do { return try await data(at: url, limit: limit) } catch let error as ResourceError where error.code == .notFound {
      return nil
    }
  }

  public func document(at url: URL, limit: Int, unless validators: CacheValidators?) async throws -> FetchedDocument {
    .fetched(try await data(at: url, limit: limit), CacheValidators())
  }

  public func stream(_ url: URL, resume: ResumePoint?, start: (Int64, CacheValidators) throws -> Void,
                     into sink: (UnsafeRawBufferPointer) throws -> Void) async throws {
    try start(0, CacheValidators())
    try await stream(url, into: sink)
  }

  public func reportDamaged(_ url: URL) async -> Bool { false }
}

/// Reads `file://` catalogs (and plain paths) from the local file system.
public struct FileTransport: BlobTransport {
  public init() {}

  public func data(at url: URL, limit: Int) async throws -> Data {
    try dataSync(at: url, limit: limit)
  }

  package func dataSync(at url: URL, limit: Int) throws -> Data {
    guard FileIO.kind(of: url) == .file else {
      throw ResourceError(.notFound, "Nothing at '\(url.path)'. A catalog is a folder made by `odr pack`, or its catalog.json.")
    }
    guard let size = FileIO.size(of: url), size <= Int64(limit) else {
      throw ResourceError(.integrity, "'\(url.path)' is larger than \(limit) bytes; refusing it.")
    }
    do { return try Data(contentsOf: url) } catch { throw FileIO.error("Cannot read '\(url.path)'", error) }
  }

  public func stream(_ url: URL, into sink: (UnsafeRawBufferPointer) throws -> Void) async throws {
    guard FileIO.kind(of: url) != .missing else { throw ResourceError(.notFound, "Nothing at '\(url.path)'.") }
    try FileIO.readChunks(of: url) { chunk in
      try Task.checkCancellation()
      try sink(chunk)
    }
  }
}
