public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
public import ODRResources
import Synchronization

/// Fetches catalogs and blobs over HTTP(S) with URLSession.
///
/// Blob bodies are handed to the store chunk by chunk as they arrive and
/// never touch a temporary file. Memory stays bounded: when more than
/// ``highWater`` bytes wait to be consumed, the transfer is suspended until
/// the store has caught up. Every failure becomes a ``ResourceError`` with
/// code `.network` that names the URL and, for HTTP errors, the status.
///
/// Kept out of ODRResources so that programs which never download do not
/// link FoundationNetworking (and libcurl), which costs ~8 ms at start-up.
public struct HTTPTransport: BlobTransport {
  /// Bytes buffered before the transfer is suspended.
  public static let highWater = 8 << 20
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
        receiver.consumed(chunk.count)
      }
      try Task.checkCancellation()
    } onCancel: {
      receiver.cancel()
    }
  }
}

/// The session delegate: forwards body chunks into an async stream and
/// applies backpressure by suspending the task.
private final class Receiver: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  let url: URL
  let chunks: AsyncThrowingStream<Data, any Error>
  private let continuation: AsyncThrowingStream<Data, any Error>.Continuation
  private let state = Mutex((buffered: 0, suspended: false))
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
    let suspend = state.withLock { state -> Bool in
      state.buffered += data.count
      guard state.buffered > HTTPTransport.highWater, !state.suspended else { return false }
      state.suspended = true
      return true
    }
    continuation.yield(data)
    if suspend { dataTask.suspend() }
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
    guard let error else { return continuation.finish() }
    if (error as? URLError)?.code == .cancelled { return continuation.finish(throwing: CancellationError()) }
    continuation.finish(throwing: ResourceError(.network, "Downloading \(url.absoluteString) failed: \(error.localizedDescription). Check the connection and try again; nothing was installed."))
  }

  /// Ends the stream at once (a suspended task may not report its own
  /// cancellation promptly) and cancels the transfer.
  func cancel() {
    continuation.finish(throwing: CancellationError())
    task?.cancel()
  }

  /// The store took `count` bytes; resume a suspended transfer once most of
  /// the buffer is drained.
  func consumed(_ count: Int) {
    let resume = state.withLock { state -> Bool in
      state.buffered -= count
      guard state.suspended, state.buffered < HTTPTransport.highWater / 4 else { return false }
      state.suspended = false
      return true
    }
    if resume { task?.resume() }
  }
}
