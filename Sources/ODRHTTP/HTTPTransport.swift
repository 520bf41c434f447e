public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
public import ODRResources

/// Fetches catalogs and blobs over HTTP(S) with URLSession.
///
/// Blob bodies are handed to the store chunk by chunk as they arrive and
/// never touch a temporary file. There is no backpressure: corelibs
/// URLSession delivers data asynchronously on its delegate queue, and
/// suspending a task mid-transfer crashes it (NativeProtocol "no transfer in
/// progress"), so a consumer slower than the network buffers in memory.
/// Every failure becomes a ``ResourceError`` with code `.network` that names
/// the URL and, for HTTP errors, the status.
///
/// Kept out of ODRResources so that programs which never download do not
/// link FoundationNetworking (and libcurl), which costs ~8 ms at start-up.
public struct HTTPTransport: BlobTransport {
  let timeout: TimeInterval

  /// `timeout`: seconds without progress before a request fails.
  public init(timeout: TimeInterval = 30) {
    self.timeout = timeout
  }

  public func data(at url: URL, limit: Int) async throws -> Data {
    var data = Data()
    try await stream(url) { chunk in
      guard data.count + chunk.count <= limit else {
        throw ResourceError(.invalidSource, "\(url.absoluteString) is larger than \(limit) bytes; it is not a catalog.")
      }
      data.append(contentsOf: chunk)
    }
    return data
  }

  public func stream(_ url: URL, into sink: (UnsafeRawBufferPointer) throws -> Void) async throws {
    let receiver = Receiver(url: url)
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = timeout
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    let session = URLSession(configuration: configuration, delegate: receiver, delegateQueue: nil)
    defer { session.invalidateAndCancel() }
    let task = session.dataTask(with: url)
    receiver.task = task
    try await withTaskCancellationHandler {
      task.resume()
      for try await chunk in receiver.chunks {
        try Task.checkCancellation()
        try chunk.withUnsafeBytes { try sink($0) }
      }
      try Task.checkCancellation()
    } onCancel: {
      receiver.cancel()
    }
  }
}

/// The session delegate: forwards body chunks into an async stream.
private final class Receiver: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  let url: URL
  let chunks: AsyncThrowingStream<Data, any Error>
  private let continuation: AsyncThrowingStream<Data, any Error>.Continuation
  nonisolated(unsafe) var task: URLSessionDataTask?

  init(url: URL) {
    self.url = url
    (chunks, continuation) = AsyncThrowingStream.makeStream()
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                  completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
    if let http = response as? HTTPURLResponse, !(200..<300).contains(http.statusCode) {
      continuation.finish(throwing: ResourceError(.network, "\(url.absoluteString) answered HTTP \(http.statusCode)\(http.statusCode == 404 ? " (not on the server: is the catalog complete?)" : ""); nothing was installed. Try again later."))
      completionHandler(.cancel)
      return
    }
    completionHandler(.allow)
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    continuation.yield(data)
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
    guard let error else { return continuation.finish() }
    if (error as? URLError)?.code == .cancelled { return continuation.finish(throwing: CancellationError()) }
    continuation.finish(throwing: ResourceError(.network, "Downloading \(url.absoluteString) failed: \(error.localizedDescription). Check the connection and try again; nothing was installed."))
  }

  /// Ends the stream at once, whatever is still buffered, and cancels the
  /// transfer.
  func cancel() {
    continuation.finish(throwing: CancellationError())
    task?.cancel()
  }
}
