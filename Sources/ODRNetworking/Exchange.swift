import Foundation
import ODRBase
import FoundationNetworking
import Synchronization

/// One request: the response, then the body chunk by chunk as it arrives
/// (an async stream fed by its session's delegate), with redirects handed
/// back rather than followed and nothing cached. Whoever starts one calls
/// ``cancel()`` when done with it (a body left unread is dropped).
///
/// Body bytes gather in one buffer that the reader takes whole, so each
/// read takes everything that arrived since the last one: a reader as fast
/// as a disk keeps up with the network in a few large writes. URLSession
/// has no backpressure to give (swift-corelibs-foundation queues every
/// chunk to the delegate, and `suspend()` does not pause a transfer), so a
/// reader slower than the network — a pipe into a slow program — still
/// lets the buffer grow.
final class Exchange: @unchecked Sendable {
  /// `.data` says the buffer went from empty to not.
  enum Event { case response(HTTPURLResponse), data }
  private var iterator: AsyncThrowingStream<Event, any Error>.AsyncIterator
  fileprivate let continuation: AsyncThrowingStream<Event, any Error>.Continuation
  private let task: URLSessionTask
  /// Where a download exchange's body goes (nil: a data exchange). Its
  /// response comes when the body is complete, and ``next()`` reads the
  /// file once.
  fileprivate let file: URL?
  private var fileRead = false
  /// Bytes received and not yet read.
  private let buffer = Mutex(Data())

  fileprivate init(task: URLSessionTask, file: URL?, stream: AsyncThrowingStream<Event, any Error>,
                   continuation: AsyncThrowingStream<Event, any Error>.Continuation) {
    self.task = task
    self.file = file
    self.iterator = stream.makeAsyncIterator()
    self.continuation = continuation
  }

  /// The response's head.
  func response() async throws -> HTTPURLResponse {
    guard case .response(let response)? = try await iterator.next() else {
      throw URLError(.badServerResponse)
    }
    return response
  }

  /// The body that arrived since the last call; nil at its end. For a
  /// download, the file's first `limit` + 1 bytes (more than `limit` says
  /// it is larger), once.
  func next(limit: Int = .max) async throws -> Data? {
    if let file {
      defer { fileRead = true }
      guard !fileRead, let handle = FileHandle(forReadingAtPath: file.path) else { return nil }
      defer { dropping(.cleanup) { try handle.close() } }  // read-only: closing cannot lose data
      return try handle.read(upToCount: limit == .max ? .max : limit + 1)
    }
    guard case .data? = try await iterator.next() else { return nil }
    return buffer.withLock { buffer in
      defer { buffer = Data() }
      return buffer
    }
  }

  /// Adds `data` to the buffer, and wakes the reader if it was empty.
  fileprivate func received(_ data: Data) {
    let wasEmpty = buffer.withLock { buffer in
      defer { buffer.append(data) }
      return buffer.isEmpty
    }
    if wasEmpty { continuation.yield(.data) }
  }

  func cancel() {
    task.cancel()
    continuation.finish()
  }
}

/// A URLSession whose requests each feed an ``Exchange``: one session, so
/// requests share its connections (keep-alive), its delegate routing each
/// task's events to its own stream. Ephemeral: no cache, no cookies.
final class ExchangeSession: NSObject, URLSessionDataDelegate, URLSessionDownloadDelegate, @unchecked Sendable {
  private let routes = Mutex<[Int: Exchange]>([:])
  private(set) var session: URLSession!

  init(configuration: URLSessionConfiguration = .ephemeral) {
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.urlCache = nil
    configuration.httpCookieStorage = nil
    super.init()
    session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
  }

  /// One request on a session of its own that stalls after `stall` without
  /// a byte (the catalog and blob transport).
  static func single(_ request: URLRequest, stall: Duration) -> Exchange {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = Double(stall.components.seconds) + Double(stall.components.attoseconds) / 1e18
    let session = ExchangeSession(configuration: configuration)
    defer { session.session.finishTasksAndInvalidate() }
    return session.exchange(request)
  }

  /// Starts `request`; with `file`, as a download into it: libcurl's
  /// transfer writes each chunk to disk before it reads the next, so a body
  /// of any size takes no memory (a data exchange's buffer has no bound).
  func exchange(_ request: URLRequest, downloadingTo file: URL? = nil) -> Exchange {
    let (events, continuation) = AsyncThrowingStream.makeStream(of: Exchange.Event.self)
    let task: URLSessionTask = file == nil ? session.dataTask(with: request) : session.downloadTask(with: request)
    let exchange = Exchange(task: task, file: file, stream: events, continuation: continuation)
    routes.withLock { $0[task.taskIdentifier] = exchange }
    task.resume()
    return exchange
  }

  private func route(_ task: URLSessionTask) -> Exchange? {
    routes.withLock { $0[task.taskIdentifier] }
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                  completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
    guard let response = response as? HTTPURLResponse else {
      route(dataTask)?.continuation.finish(throwing: URLError(.badServerResponse))
      return completionHandler(.cancel)
    }
    route(dataTask)?.continuation.yield(.response(response))
    completionHandler(.allow)
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    route(dataTask)?.received(data)
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                  newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
    completionHandler(nil)  // the caller decides where a redirect may go
  }

  func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
    guard let file = route(downloadTask)?.file else { return }
    // the temporary is URLSession's, removed when this returns; a failed
    // move leaves no file, which the reader of the body reports
    dropping(.isTheAnswer) { try FileManager.default.removeItem(at: file) }
    dropping(.isTheAnswer) { try FileManager.default.moveItem(at: location, to: file) }
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
    let exchange = routes.withLock { $0.removeValue(forKey: task.taskIdentifier) }
    if let error { return exchange?.continuation.finish(throwing: error) ?? () }
    if exchange?.file != nil, let response = task.response as? HTTPURLResponse { exchange?.continuation.yield(.response(response)) }
    exchange?.continuation.finish()
  }
}
