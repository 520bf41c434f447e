public import FoundationEssentials

/// Where catalogs and blobs come from. The store verifies everything a
/// transport delivers; a transport only moves bytes.
public protocol BlobTransport: Sendable {
  /// The bytes at `url`, at most `limit` of them (a catalog).
  func data(at url: URL, limit: Int) async throws -> Data
  /// Like ``data(at:limit:)``, but nil when nothing is there (a catalog's
  /// optional signature).
  func dataIfPresent(at url: URL, limit: Int) async throws -> Data?
  /// Streams the bytes at `url` into `sink`, chunk by chunk, so memory stays
  /// constant whatever the size. Must stop with `CancellationError` when
  /// the task is cancelled.
  func stream(_ url: URL, into sink: (UnsafeRawBufferPointer) throws -> Void) async throws
}

extension BlobTransport {
  public func dataIfPresent(at url: URL, limit: Int) async throws -> Data? {
    do { return try await data(at: url, limit: limit) } catch let error as ResourceError where error.code == .notFound {
      return nil
    }
  }
}

/// Reads `file://` catalogs (and plain paths) from the local file system.
public struct FileTransport: BlobTransport {
  public init() {}

  public func data(at url: URL, limit: Int) async throws -> Data {
    try dataSync(at: url, limit: limit)
  }

  func dataSync(at url: URL, limit: Int) throws -> Data {
    guard FileIO.kind(of: url) == .file else {
      throw ResourceError(.notFound, "Nothing at '\(url.path)'. Check --catalog (a folder made by `odr pack`, or its catalog.json).")
    }
    guard let size = FileIO.size(of: url), size <= Int64(limit) else {
      throw ResourceError(.integrity, "'\(url.path)' is larger than \(limit) bytes; refusing it.")
    }
    do { return try Data(contentsOf: url) } catch { throw FileIO.error("Cannot read '\(url.path)'") }
  }

  public func stream(_ url: URL, into sink: (UnsafeRawBufferPointer) throws -> Void) async throws {
    try FileIO.readChunks(of: url) { chunk in
      try Task.checkCancellation()
      try sink(chunk)
    }
  }
}
