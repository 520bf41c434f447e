public import FoundationEssentials
import AsyncHTTPClient
import NIOCore
import NIOHTTP1
public import ODRResources

/// Fetches catalogs and blobs over HTTP(S) with AsyncHTTPClient.
///
/// Blob bodies reach the store chunk by chunk as they arrive and never touch
/// a temporary file. Memory stays bounded whatever the size: the response
/// body is an async sequence with backpressure, so the connection is read
/// only as fast as the store hashes and writes. (corelibs URLSession cannot
/// do this: it delivers data on its delegate queue regardless, and
/// suspending a task mid-transfer crashes it; with it a 256 MiB download
/// peaked at 159 MiB of RSS.) Every failure becomes a ``ResourceError`` with
/// code `.network` that names the URL and, for HTTP errors, the status.
///
/// Kept out of ODRResources so that programs which never download do not
/// carry an HTTP stack.
public struct HTTPTransport: BlobTransport {
  /// One client for the process; it is never shut down, it lives as long as
  /// the process does.
  private static let client = HTTPClient(
    eventLoopGroupProvider: .singleton,
    configuration: HTTPClient.Configuration(
      timeout: HTTPClient.Configuration.Timeout(connect: .seconds(10), read: .seconds(30)),
      decompression: .disabled))

  public init() {}

  public func data(at url: URL, limit: Int) async throws -> Data {
    try await dataIfPresent(at: url, limit: limit, absentIsError: true)!
  }

  public func dataIfPresent(at url: URL, limit: Int) async throws -> Data? {
    try await dataIfPresent(at: url, limit: limit, absentIsError: false)
  }

  private func dataIfPresent(at url: URL, limit: Int, absentIsError: Bool) async throws -> Data? {
    var data = Data()
    let found = try await receive(url, absentIsError: absentIsError) { chunk in
      guard data.count + chunk.count <= limit else {
        throw ResourceError(.integrity, "\(url.absoluteString) is larger than \(limit) bytes; refusing it.")
      }
      data.append(contentsOf: chunk)
    }
    return found ? data : nil
  }

  public func stream(_ url: URL, into sink: (UnsafeRawBufferPointer) throws -> Void) async throws {
    _ = try await receive(url, absentIsError: true, into: sink)
  }

  /// Streams the body into `sink`; false when the server answered 404 and
  /// that is not an error.
  private func receive(_ url: URL, absentIsError: Bool, into sink: (UnsafeRawBufferPointer) throws -> Void) async throws -> Bool {
    do {
      let response = try await Self.client.execute(HTTPClientRequest(url: url.absoluteString), timeout: .hours(24))
      if response.status.code == 404 && !absentIsError { return false }
      guard (200..<300).contains(response.status.code) else {
        let hint = response.status.code == 404 ? " (not on the server: is the catalog complete?)" : ""
        throw ResourceError(.network, "\(url.absoluteString) answered HTTP \(response.status.code)\(hint); nothing was installed. Try again later.")
      }
      for try await buffer in response.body {
        try Task.checkCancellation()
        try buffer.withUnsafeReadableBytes { try sink($0) }
      }
      return true
    } catch let error as ResourceError {
      throw error
    } catch {
      if Task.isCancelled || error is CancellationError { throw CancellationError() }
      throw ResourceError(.network, "Downloading \(url.absoluteString) failed: \(error). Check the connection and try again; nothing was installed.")
    }
  }
}
