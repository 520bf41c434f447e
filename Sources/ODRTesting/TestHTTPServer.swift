public import Foundation
import ODRBase
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// An HTTP/1.1 server on 127.0.0.1, on a port of its own, for as long as a
/// test's closure runs: it serves a folder or answers with a handler, records
/// every request, and injects the faults a download must survive.
///
/// Built on Hummingbird: connections kept alive, no thread per connection,
/// waits (latency, slow bodies, delays) that hold no thread. It answers on
/// both `http://127.0.0.1:PORT` and `http://localhost:PORT`: two host names
/// for one server, which is how tests tell a same-host request from a
/// cross-host one.
///
/// ```swift
/// try await TestHTTPServer.serving(files: published) { server in
///   server.setFault(.dropAfter(1000), forPathEndingWith: sha256)
///   … server.baseURL …
/// }
/// ```
public final class TestHTTPServer: Sendable {
  /// A request as the server read it.
  public struct Request: Sendable {
    public let method: String
    /// The request target: path and query, as sent.
    public let target: String
    /// Header names lower-cased; the host is under "host".
    public let headers: [String: String]
    public let body: Data
    /// When the server finished reading it.
    public let received: ContinuousClock.Instant

    /// The path without the query.
    public var path: String { String(target.split(separator: "?", maxSplits: 1).first ?? "/") }
    /// The raw query, if any.
    public var query: String? { target.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) }
  }

  /// What a handler answers.
  public struct Reply: Sendable {
    public var status: Int
    public var headers: [String: String]
    public var body: Data
    /// Wait this long before answering (a slow server).
    public var delay: Duration?
    /// Close the connection without answering (a dropped connection).
    public var drop: Bool

    public init(status: Int = 200, headers: [String: String] = [:], body: Data = Data(), delay: Duration? = nil, drop: Bool = false) {
      self.status = status
      self.headers = headers
      self.body = body
      self.delay = delay
      self.drop = drop
    }

    /// A reply with `text` as the body.
    public static func text(_ text: String, status: Int = 200) -> Reply { Reply(status: status, body: Data(text.utf8)) }
  }

  /// What goes wrong when a path is answered.
  public enum Fault: Sendable, Equatable {
    /// Answer with this status and a short body instead.
    case status(Int)
    /// Send the headers and this many body bytes, then drop the connection.
    case dropAfter(Int)
    /// Announce and send only this many bytes: a complete but short body.
    case truncate(Int)
    /// Flip one bit of the byte at this offset.
    case flipByte(Int)
    /// Send the body in chunks of this size with this pause between them.
    case slow(chunk: Int, pause: Duration)
    /// Wait this long before answering: a server far away (round trips, a CDN miss).
    case latency(Duration)
  }

  private struct State {
    var port = 0
    var requests: [Request] = []
    var faults: [String: Fault] = [:]
    var inFlight = 0
    var peak = 0
  }

  private let state = Mutex(State())
  private let handler: @Sendable (Request) -> Reply
  private let running = Mutex<Task<Void, any Error>?>(nil)

  private init(handler: @escaping @Sendable (Request) -> Reply) {
    self.handler = handler
  }

  /// Runs `test` with a server answering every request with `handler`; the
  /// server is stopped when `test` returns or throws.
  public static func answering<T>(
    _ handler: @escaping @Sendable (Request) -> Reply,
    _ test: (TestHTTPServer) async throws -> T
  ) async throws -> T {
    let server = TestHTTPServer(handler: handler)
    try await server.start()
    do {
      let value = try await test(server)
      await server.stop()
      return value
    } catch {
      await server.stop()
      throw error
    }
  }

  /// Runs `test` with a server of the files below `root` (GET only; 404
  /// for what is not there).
  public static func serving<T>(files root: URL, _ test: (TestHTTPServer) async throws -> T) async throws -> T {
    try await answering({ request in
      guard request.method == "GET" else { return .text("only GET\n", status: 405) }
      let relative = request.path.removingPercentEncoding ?? request.path
      let file = root.appending(path: String(relative.drop { $0 == "/" }))
      // not found: answered 404 below
      guard !relative.contains(".."), let data = dropping(.isTheAnswer, { try Data(contentsOf: file, options: .mappedIfSafe) }) else {
        return .text("not found\n", status: 404)
      }
      return Reply(headers: ["Content-Type": "application/octet-stream"], body: data)
    }, test)
  }

  /// The port the server listens on.
  public var port: Int { state.withLock { $0.port } }
  /// `http://127.0.0.1:PORT` (no trailing slash).
  public var url: String { "http://127.0.0.1:\(port)" }
  /// `http://127.0.0.1:PORT/`
  public var baseURL: URL { URL(string: url + "/")! }
  /// The same server under another host name: `http://localhost:PORT`.
  public var otherHostURL: String { "http://localhost:\(port)" }

  /// Every request so far, in order.
  public var requests: [Request] { state.withLock { $0.requests } }
  /// The paths requested, in the order the requests arrived.
  public var requestOrder: [String] { requests.map(\.path) }
  /// How many requests were answered in all.
  public var totalRequests: Int { state.withLock { $0.requests.count } }
  /// The most requests that were being answered at once.
  public var maxConcurrentRequests: Int { state.withLock { $0.peak } }

  /// How many requests asked for a path ending with `suffix`.
  public func requests(forPathEndingWith suffix: String) -> Int {
    state.withLock { $0.requests.count { $0.path.hasSuffix(suffix) } }
  }

  /// Sets (or with nil clears) the fault for requests whose path ends with `suffix`.
  public func setFault(_ fault: Fault?, forPathEndingWith suffix: String) {
    state.withLock { $0.faults[suffix] = fault }
  }

  /// Closes the port and every connection, and waits until they are closed:
  /// after it, connecting is refused. Done anyway when the test's closure ends.
  public func stop() async {
    let task = running.withLock { $0.take() }
    task?.cancel()
    _ = await task?.result
  }

  // MARK: Serving

  /// Hummingbird's per-request context, keeping the connection so that a
  /// reply can drop it.
  private struct Context: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
      coreContext = CoreRequestContextStorage(source: source)
      channel = source.channel
    }
  }

  /// The connection is dropped on purpose (a fault).
  private struct Dropped: Error {}

  private func start() async throws {
    let (ports, announce) = AsyncStream.makeStream(of: Int.self)
    let app = Application(
      responder: CallbackResponder { [self] (request, context: Context) in try await response(to: request, on: context.channel) },
      configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
      onServerRunning: { channel in
        announce.yield(channel.localAddress?.port ?? 0)
        announce.finish()
      },
      logger: Logger(label: "odr.test-server") { _ in SwiftLogNoOpLogHandler() }
    )
    let task = Task {
      defer { announce.finish() }  // a failed bind: no port comes
      try await app.run()
    }
    running.withLock { $0 = task }
    var announced = ports.makeAsyncIterator()
    guard let port = await announced.next(), port > 0 else {
      let failure = await task.result
      throw TestFailure("the test server did not start on 127.0.0.1: \(failure)")
    }
    state.withLock { $0.port = port }
  }

  private func response(to request: HummingbirdCore.Request, on channel: any Channel) async throws -> Response {
    let body = try await request.body.collect(upTo: .max)
    var headers: [String: String] = [:]
    for field in request.headers { headers[field.name.canonicalName] = field.value }
    headers["host"] = request.head.authority
    let recorded = Request(method: request.method.rawValue, target: request.head.path ?? "/", headers: headers,
                           body: Data(body.readableBytesView), received: .now)
    let fault = state.withLock { state in
      state.requests.append(recorded)
      state.inFlight += 1
      state.peak = max(state.peak, state.inFlight)
      return state.faults.first { recorded.path.hasSuffix($0.key) }?.value
    }
    let done: @Sendable () -> Void = { [self] in state.withLock { $0.inFlight -= 1 } }

    var reply = handler(recorded)
    var announced: Int?
    var dropAfter: Int?
    var chunk = 256 << 10
    var pause: Duration?
    switch fault {
    case .status(let code): reply = .text("fault \(code)\n", status: code)
    case .dropAfter(let bytes): dropAfter = bytes
    case .truncate(let bytes): reply.body = reply.body.prefix(bytes); announced = reply.body.count
    case .flipByte(let offset): if offset < reply.body.count { reply.body[reply.body.startIndex + offset] ^= 0x01 }
    case .slow(let size, let wait): chunk = size; pause = wait
    case .latency(let wait): reply.delay = wait
    case nil: break
    }
    if let delay = reply.delay { try await Task.sleep(for: delay) }
    if reply.drop {
      done()
      try await channel.close()
      throw Dropped()
    }

    var fields = HTTPFields()
    for (name, value) in reply.headers { if let name = HTTPField.Name(name) { fields[name] = value } }
    let bytes = reply.body
    return Response(status: .init(code: reply.status), headers: fields,
                    body: ResponseBody(contentLength: announced ?? bytes.count) { [chunk, pause, dropAfter] writer in
      defer { done() }
      var offset = 0
      while offset < bytes.count {
        var end = min(offset + chunk, bytes.count)
        if let limit = dropAfter {
          guard offset < limit else { throw Dropped() }  // the body stays incomplete
          end = min(end, limit)
        }
        try await writer.write(ByteBuffer(bytes: bytes[bytes.startIndex + offset..<bytes.startIndex + end]))
        offset = end
        if let pause, offset < bytes.count { try await Task.sleep(for: pause) }
      }
      try await writer.finish(nil)
    })
  }
}
