public import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import ODRBase
import Synchronization

/// An HTTP/1.1 server on 127.0.0.1, on a port of its own, for as long as a
/// test's closure runs: it serves a folder or answers with a handler, records
/// every request, and injects the faults a download must survive.
///
/// Built on SwiftNIO's HTTP/1.1 server pipeline (the event loops odr's own
/// network code runs on): connections kept alive, no thread per connection,
/// waits (latency, slow bodies, delays) scheduled on the event loop, holding
/// no thread. (It was built on Hummingbird, whose packages took a tenth of
/// a clean build for what these ~100 lines do.) It answers on
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
    /// How many requests its connection carried before this one (0: a
    /// new connection).
    public let onConnection: Int

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
    var accepted = 0
    var requests: [Request] = []
    var faults: [String: Fault] = [:]
    var inFlight = 0
    var peak = 0
  }

  private let state = Mutex(State())
  private let handler: Handler
  private let listener = Mutex<(any Channel)?>(nil)
  private let connections = Mutex<[ObjectIdentifier: any Channel]>([:])

  /// How requests are answered: at once on the connection's loop, or by
  /// a task (a server that asks another before it answers: a shim).
  fileprivate enum Handler {
    case immediate(@Sendable (Request) -> Reply)
    case deferred(@Sendable (Request) async -> Reply)
  }

  private init(handler: Handler) {
    self.handler = handler
  }

  /// Runs `test` with a server answering every request with `handler`; the
  /// server is stopped when `test` returns or throws.
  public static func answering<T>(
    _ handler: @escaping @Sendable (Request) -> Reply,
    _ test: (TestHTTPServer) async throws -> T
  ) async throws -> T {
    try await run(TestHTTPServer(handler: .immediate(handler)), test)
  }

  /// Runs `test` with a server answering every request with what
  /// `handler` returns, awaited off the connection's loop: a shim in front
  /// of another server, which forwards what it does not answer itself.
  public static func answeringAsync<T>(
    _ handler: @escaping @Sendable (Request) async -> Reply,
    _ test: (TestHTTPServer) async throws -> T
  ) async throws -> T {
    try await run(TestHTTPServer(handler: .deferred(handler)), test)
  }

  private static func run<T>(_ server: TestHTTPServer, _ test: (TestHTTPServer) async throws -> T) async throws -> T {
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

  /// How many connections clients opened.
  public var acceptedConnections: Int { state.withLock { $0.accepted } }

  /// How many connections are open now.
  public var openConnections: Int { connections.withLock { $0.count } }

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
    if let listener = listener.withLock({ $0.take() }) {
      await droppingAsync(.cleanup) { try await listener.close() }
    }
    for connection in connections.withLock({ Array($0.values) }) {
      connection.close(promise: nil)
      await droppingAsync(.cleanup) { try await connection.closeFuture.get() }
    }
  }

  // MARK: Serving

  private func start() async throws {
    let channel: any Channel
    do {
      channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelInitializer { [self] channel in
          let id = ObjectIdentifier(channel)
          connections.withLock { $0[id] = channel }
          state.withLock { $0.accepted += 1 }
          channel.closeFuture.whenComplete { [self] _ in _ = connections.withLock { $0.removeValue(forKey: id) } }
          return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
            try channel.pipeline.syncOperations.addHandler(Connection(server: self))
          }
        }
        .bind(host: "127.0.0.1", port: 0).get()
    } catch {
      throw TestFailure("the test server did not start on 127.0.0.1: \(error)")
    }
    listener.withLock { $0 = channel }
    state.withLock { $0.port = channel.localAddress?.port ?? 0 }
  }

  /// Answers `request` through `proceed`: at once, or once a deferred
  /// handler has its reply (then on `loop`).
  fileprivate func answer(_ request: Request, on loop: any EventLoop, _ proceed: @escaping (Plan) -> Void) {
    switch handler {
    case .immediate(let reply):
      proceed(plan(for: request, reply: reply(request)))
    case .deferred(let reply):
      let bound = NIOLoopBound(proceed, eventLoop: loop)
      Task {
        let answer = await reply(request)
        loop.execute { bound.value(self.plan(for: request, reply: answer)) }
      }
    }
  }

  /// Records `request`, and says how to answer it: `reply` with the path's
  /// fault applied, and the fault's drop point and pacing.
  private func plan(for request: Request, reply: Reply) -> Plan {
    let fault = state.withLock { state in
      state.requests.append(request)
      state.inFlight += 1
      state.peak = max(state.peak, state.inFlight)
      return state.faults.first { request.path.hasSuffix($0.key) }?.value
    }
    var plan = Plan(reply: reply)
    switch fault {
    case .status(let code): plan.reply = .text("fault \(code)\n", status: code)
    case .dropAfter(let bytes): plan.dropAfter = bytes
    case .truncate(let bytes): plan.reply.body = plan.reply.body.prefix(bytes)
    case .flipByte(let offset): if offset < plan.reply.body.count { plan.reply.body[plan.reply.body.startIndex + offset] ^= 0x01 }
    case .slow(let size, let wait): plan.chunk = size; plan.pause = wait
    case .latency(let wait): plan.reply.delay = wait
    case nil: break
    }
    return plan
  }

  fileprivate func answered() {
    state.withLock { $0.inFlight -= 1 }
  }

  /// How one request is answered.
  fileprivate struct Plan {
    var reply: Reply
    var dropAfter: Int?
    var chunk = 256 << 10
    var pause: Duration?
  }
}

/// One connection: reads each request whole, then answers it as its plan
/// says, on the connection's event loop.
private final class Connection: ChannelInboundHandler {
  typealias InboundIn = HTTPServerRequestPart
  typealias OutboundOut = HTTPServerResponsePart

  let server: TestHTTPServer
  private var head: HTTPRequestHead?
  private var body = Data()
  private var carried = 0

  init(server: TestHTTPServer) {
    self.server = server
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    switch unwrapInboundIn(data) {
    case .head(let head):
      self.head = head
      body = Data()
    case .body(let buffer):
      body.append(contentsOf: buffer.readableBytesView)
    case .end:
      guard let head else { return }
      self.head = nil
      var headers: [String: String] = [:]
      for (name, value) in head.headers { headers[name.lowercased()] = value }
      let request = TestHTTPServer.Request(method: head.method.rawValue, target: head.uri, headers: headers, body: body, received: .now,
                                           onConnection: carried)
      carried += 1
      server.answer(request, on: context.eventLoop) { plan in
        if let delay = plan.reply.delay {
          context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(delay)) { self.answer(plan, keepAlive: head.isKeepAlive, context: context) }
        } else {
          self.answer(plan, keepAlive: head.isKeepAlive, context: context)
        }
      }
    }
  }

  private func answer(_ plan: TestHTTPServer.Plan, keepAlive: Bool, context: ChannelHandlerContext) {
    if plan.reply.drop {
      server.answered()
      context.close(promise: nil)
      return
    }
    var headers = HTTPHeaders(plan.reply.headers.map { ($0.key, $0.value) })
    headers.replaceOrAdd(name: "content-length", value: "\(plan.reply.body.count)")
    if !keepAlive { headers.replaceOrAdd(name: "connection", value: "close") }
    context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: plan.reply.status), headers: headers))),
                  promise: nil)
    send(plan, from: 0, keepAlive: keepAlive, context: context)
  }

  /// Sends the body from `offset` a chunk at a time, pausing between chunks
  /// when the plan says so, and dropping the connection at its drop point.
  private func send(_ plan: TestHTTPServer.Plan, from offset: Int, keepAlive: Bool, context: ChannelHandlerContext) {
    guard context.channel.isActive else {  // the client left mid-answer (a paced body outlived it)
      server.answered()
      return
    }
    let bytes = plan.reply.body
    if offset < bytes.count {
      var end = min(offset + plan.chunk, bytes.count)
      if let limit = plan.dropAfter {
        guard offset < limit else {  // the body stays incomplete
          context.flush()
          server.answered()
          context.close(promise: nil)
          return
        }
        end = min(end, limit)
      }
      context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: bytes[bytes.startIndex + offset..<bytes.startIndex + end])))),
                            promise: nil)
      if let pause = plan.pause, end < bytes.count {
        context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(pause)) { self.send(plan, from: end, keepAlive: keepAlive, context: context) }
      } else {
        send(plan, from: end, keepAlive: keepAlive, context: context)
      }
      return
    }
    server.answered()
    let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
    if !keepAlive { written.assumeIsolated().whenComplete { _ in context.close(promise: nil) } }
  }
}
