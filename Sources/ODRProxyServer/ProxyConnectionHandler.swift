import FoundationEssentials
import NIOCore
import ODRHTTP
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS
import ODRBase
import ODRProxy
import Synchronization

/// One client connection of the proxy, as HTTP/1.1: the plain listener, or
/// the inside of an intercepted `CONNECT` after TLS. It reads each request
/// whole (bounded), takes the proxy's one decision, answers refusals
/// itself and sends the rest upstream (``UpstreamAnswer``).
final class ProxyConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
  typealias InboundIn = HTTPServerRequestPart
  typealias OutboundOut = HTTPServerResponsePart

  enum Mode {
    case listener
    /// Inside TLS for `host:port`, as the CONNECT line (`connect`) and
    /// the client hello (`sni`, if it sent one) named it.
    case intercepted(host: ProxyHost, port: Int, connect: String, sni: String?)
  }

  /// The HTTP handlers in front of this one, removed when a CONNECT turns
  /// the connection into a tunnel or TLS.
  private struct HTTPHandlers {
    let encoder = HTTPResponseEncoder()
    let decoder: ByteToMessageHandler<HTTPRequestDecoder>
    let pipelining = HTTPServerPipelineHandler()
    let errors = HTTPServerProtocolErrorHandler()
  }

  private let mode: Mode
  private let shared: ProxyServer.Shared
  private let handlers: HTTPHandlers
  private let connection: ConnectionInfo
  private var head: HTTPRequestHead?
  private var body = ByteBuffer()
  private var tooLarge = false
  /// The current request was answered at its head (no token): its body is
  /// not read, and the connection closes once the answer is out.
  private var refusedAtHead = false

  /// Adds the HTTP handlers and a handler in `mode` to `channel` (on its event loop).
  static func install(on channel: any Channel, mode: Mode, shared: ProxyServer.Shared, connection: ConnectionInfo) throws {
    var limits = NIOHTTPDecoderLimitConfiguration()
    limits.maxHeaderFieldSize = shared.limits.headerBytes
    limits.maxHeaderListSize = shared.limits.headerBytes
    limits.maxHeaderFieldCount = 256
    let decoder = HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes, informationalResponseStrategy: .drop, limitConfiguration: limits)
    let handlers = HTTPHandlers(decoder: ByteToMessageHandler(decoder, maximumBufferSize: shared.limits.headerBytes))
    let operations = channel.pipeline.syncOperations
    try operations.addHandler(handlers.encoder)
    try operations.addHandler(handlers.decoder)
    try operations.addHandler(handlers.pipelining)
    try operations.addHandler(handlers.errors)
    try operations.addHandler(ProxyConnectionHandler(mode: mode, shared: shared, handlers: handlers, connection: connection))
  }

  private init(mode: Mode, shared: ProxyServer.Shared, handlers: HTTPHandlers, connection: ConnectionInfo) {
    self.mode = mode
    self.shared = shared
    self.handlers = handlers
    self.connection = connection
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    switch unwrapInboundIn(data) {
    case .head(let head):
      body.clear()
      tooLarge = false
      refusedAtHead = false
      // The token is checked before anything else of the request is read.
      if let refusal = authenticationRefusal(head, channel: context.channel) {
        refusedAtHead = true
        refusal()
        return
      }
      self.head = head
    case .body(var chunk):
      guard !refusedAtHead else { return }
      if body.readableBytes + chunk.readableBytes > shared.limits.bodyBytes { tooLarge = true }
      if !tooLarge { body.writeBuffer(&chunk) }
    case .end:
      guard let head else { return }
      self.head = nil
      handle(head, context: context)
    }
  }

  func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
    // Idle: nothing read or written for the limit, and no answer on its way.
    if event is IdleStateHandler.IdleStateEvent, !connection.hasRequestInFlight { context.close(promise: nil) }
    context.fireUserInboundEventTriggered(event)
  }

  /// The answer to a request head that does not show the run's token (or
  /// to one over the authenticated connections' limit), or nil when it
  /// may go on: the proxy's credentials for a proxy request or CONNECT,
  /// the token in a base URL's path. Inside an intercepted connection the
  /// CONNECT has shown it.
  private func authenticationRefusal(_ head: HTTPRequestHead, channel: any Channel) -> (() -> Void)? {
    guard case .listener = mode else { return nil }
    let local = localTarget(head, channel: channel)
    let shown = local.map { ProxyBase.route($0, token: shared.credentials.token, bases: shared.bases) != nil }
      ?? shared.credentials.accepts(head.headers.first(name: "proxy-authorization"))
    let logged = local.map { _ in "/" } ?? head.uri
    // A client that asks without credentials first (git, curl's "any"
    // proxy authentication) and again with them is not refused: only a
    // request that shows wrong credentials, or none where none are asked
    // for again, is an audit line.
    let probing = local == nil && head.headers.first(name: "proxy-authorization") == nil
    let refuse = { (status: Int, reason: String, extra: [(String, String)]) in
      { [self] in
        if !(probing && status == 407) {
          Self.write(keys: [], method: head.method.rawValue, host: "", target: Self.withoutQuery(logged), status: status, refusal: reason,
                     shared: shared, connection: connection, channel: channel)
        }
        Self.answer(channel, status: status, reason: reason, version: head.version, keepAlive: false, extra: extra)
      }
    }
    guard shown else {
      if local != nil { return refuse(403, "this address takes proxy requests (with the run's token) and the run's base URLs only", []) }
      return refuse(407, "the proxy needs the run's credentials (they are in the proxy variables odr gave the command)",
                    [(ProxyCredentials.challenge.name, ProxyCredentials.challenge.value)])
    }
    guard shared.authenticate(connection) else { return refuse(503, "the run's proxy has \(shared.limits.connections) connections open, its most", []) }
    return nil
  }

  /// The target of a request for the proxy's own address: sent directly
  /// (origin-form), or through the proxy by a client that reads HTTP_PROXY
  /// for every URL (absolute-form http://127.0.0.1:PORT/…), which must not
  /// loop back. nil for a proxy request.
  private func localTarget(_ head: HTTPRequestHead, channel: any Channel) -> String? {
    guard case .listener = mode, head.method != .CONNECT else { return nil }
    if head.uri.hasPrefix("/") { return head.uri }
    if let absolute = Self.absoluteForm(head.uri), absolute.scheme == "http", ProxyHost(absolute.host)?.text == "127.0.0.1",
       absolute.port == channel.localAddress?.port {
      return absolute.target
    }
    return nil
  }

  private static func withoutQuery(_ target: String) -> String {
    String(target.prefix { $0 != "?" })
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    context.close(promise: nil)
  }

  // MARK: Requests

  private func handle(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
    let channel = context.channel
    // The request decoder reads no HTTP after a CONNECT, so a refused one
    // ends the connection; clients (curl, git) then connect again with the
    // credentials the 407 asked for.
    let keepAlive = head.isKeepAlive && head.method != .CONNECT
    let local = localTarget(head, channel: channel)
    // A base URL's token stays out of the log.
    let token = "/\(shared.credentials.token)/"
    let path = local ?? head.uri
    let logged = path.hasPrefix(token) ? "/" + path.dropFirst(token.count) : path
    let reply = { (status: Int, keys: [String], host: String, reason: String, extra: [(String, String)]) in
      self.audit(keys: keys, method: head.method.rawValue, host: host, target: logged, status: status, refusal: reason, channel: channel)
      Self.answer(channel, status: status, reason: reason, version: head.version, keepAlive: keepAlive, extra: extra)
    }
    if tooLarge {
      return reply(413, [], "", "the request body is over \(shared.limits.bodyBytes / (1024 * 1024)) MiB, the most odr's proxy reads", [])
    }
    if head.method == .CONNECT { return connect(head, context: context, reply: reply) }

    var request: ProxyRequest
    switch mode {
    case .listener where local != nil:
      guard let local, let (base, target) = ProxyBase.route(local, token: shared.credentials.token, bases: shared.bases) else {
        return reply(403, [], "", "this address takes proxy requests (with the run's token) and the run's base URLs only", [])
      }
      // The child's Host names the proxy; the origin's goes upstream.
      var headers = Self.headers(head.headers).filter { $0.name.lowercased() != "host" }
      headers.insert(ProxyRequest.Header("Host", base.port == (base.scheme == "https" ? 443 : 80) ? base.host.description : "\(base.host):\(base.port)"), at: 0)
      request = ProxyRequest(method: head.method.rawValue, scheme: base.scheme, host: base.host.description, port: base.port, target: target, headers: headers)
    case .listener:
      guard let absolute = Self.absoluteForm(head.uri), absolute.scheme == "http" else {
        return reply(400, [], "", "a proxy request names an http:// URL; https:// goes through CONNECT", [])
      }
      request = ProxyRequest(method: head.method.rawValue, scheme: "http", host: absolute.host, port: absolute.port, target: absolute.target,
                             headers: Self.headers(head.headers), routing: [("absolute-form", absolute.host)])
    case .intercepted(let host, let port, let connect, let sni):
      var routing = [("CONNECT line", connect)] + (sni.map { [("SNI", $0)] } ?? [])
      var target = head.uri
      if let absolute = Self.absoluteForm(head.uri) {
        routing.append(("absolute-form", absolute.host))
        target = absolute.target
      } else if !head.uri.hasPrefix("/") {
        // Neither origin-form nor a URL: nothing to append to the origin.
        return reply(400, [], host.description, "a request names a path (/…) or an http(s):// URL", [])
      }
      request = ProxyRequest(method: head.method.rawValue, scheme: "https", host: host.description, port: port, target: target,
                             headers: Self.headers(head.headers), routing: routing)
    }
    request.hashBody(body.readableBytesView)
    switch ProxyDecision.decide(request, bindings: shared.bindings) {
    case .refuse(let refusal):
      reply(refusal.status, [refusal.key].compactMap { $0 }, request.host, "\(refusal.key.map { "\($0): " } ?? "")\(refusal.reason)", [])
    case .forward(var forward):
      forward.notes += ProxyDecision.bodyNotes(body.readableBytesView, bindings: shared.bindings)
      let audit = Self.auditor(forward: forward, request: request, method: head.method.rawValue, shared: shared, connection: connection, channel: channel)
      let job = Forwarding(forward: forward, request: request, method: head.method, version: head.version, keepAlive: head.isKeepAlive, body: body)
      Self.start(job, channel: channel, shared: shared, connection: connection, audit: audit)
    }
  }

  /// What one request sends upstream.
  struct Forwarding: Sendable {
    let forward: ProxyDecision.Forward
    let request: ProxyRequest
    let method: HTTPMethod
    let version: HTTPVersion
    let keepAlive: Bool
    let body: ByteBuffer
  }

  /// Writes the audit line of a forwarded request: one per request that
  /// carried a key or a placeholder it did not substitute, and one per
  /// refusal.
  private static func auditor(forward: ProxyDecision.Forward, request: ProxyRequest, method: String, shared: ProxyServer.Shared,
                              connection: ConnectionInfo, channel: any Channel) -> @Sendable (Int, String?) -> Void {
    let (keys, host, target, notes) = (forward.keys, request.host, request.target, forward.notes)
    return { status, refusal in
      guard !keys.isEmpty || !notes.isEmpty || refusal != nil else { return }
      write(keys: keys, method: method, host: host, target: target, status: status, refusal: refusal, notes: notes, shared: shared,
            connection: connection, channel: channel)
    }
  }

  private func audit(keys: [String], method: String, host: String, target: String, status: Int, refusal: String, channel: any Channel) {
    Self.write(keys: keys, method: method, host: host, target: target, status: status, refusal: refusal, shared: shared, connection: connection, channel: channel)
  }

  /// One audit line, with the connecting process.
  private static func write(keys: [String], method: String, host: String, target: String, status: Int, refusal: String?, notes: [String] = [],
                            shared: ProxyServer.Shared, connection: ConnectionInfo, channel: any Channel) {
    shared.log.write(ProxyAuditRecord(time: Date(), keys: keys, method: method, host: host, target: target, status: status, refusal: refusal,
                                      note: notes.isEmpty ? nil : notes.joined(separator: "; "),
                                      process: connection.process(channel, child: shared.child.load(ordering: .relaxed))))
  }

  // MARK: CONNECT

  private func connect(_ head: HTTPRequestHead, context: ChannelHandlerContext,
                       reply: @escaping (Int, [String], String, String, [(String, String)]) -> Void) {
    guard case .listener = mode else { return reply(405, [], "", "CONNECT inside an intercepted connection", []) }
    let (name, port) = ProxyDecision.authority(head.uri)
    guard let port, (1...65535).contains(port), let host = ProxyHost(name) else {
      return reply(400, [], "", "CONNECT names host:port", [])
    }
    let channel = context.channel
    let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
    // Intercepted where a key may go over https (its host, at a port its
    // entries cover); any other CONNECT is a tunnel the policy checks.
    if ProxyDestination.isBound(scheme: "https", host: host, port: port, bindings: shared.bindings) {
      Self.established(channel).assumeIsolated().whenSuccess {
        let (handler, context) = bound.value
        handler.intercept(context: context, host: host, port: port, connect: name)
      }
      return
    }
    // A raw tunnel goes to the very address the policy checked.
    Self.destination(host, port: port, scheme: "https", shared: shared, eventLoop: context.eventLoop)
      .flatMap { address in
        ClientBootstrap(group: channel.eventLoop)
          .connectTimeout(.seconds(10))
          .channelOption(.allowRemoteHalfClosure, value: true)
          .connect(to: address)
      }
      .assumeIsolated()
      .whenComplete { result in
        let (handler, context) = bound.value
        switch result {
        case .success(let peer):
          Self.established(channel).assumeIsolated().whenSuccess { handler.tunnel(context: context, to: peer) }
        case .failure(let refused as DestinationRefused):
          reply(403, [], host.description, refused.reason, [])
        case .failure(let error):
          reply(502, [], host.description, "cannot reach \(host):\(port) (\(error))", [])
        }
      }
  }

  /// A destination the proxy does not connect to (``ProxyDestination``).
  struct DestinationRefused: Error {
    let reason: String
  }

  /// The address to connect to for `host:port`: resolved off the event
  /// loop, and refused (``DestinationRefused``) where the sandbox keeps the
  /// command from, unless a key of the run is bound there.
  static func destination(_ host: ProxyHost, port: Int, scheme: String, shared: ProxyServer.Shared,
                          eventLoop: any EventLoop) -> EventLoopFuture<SocketAddress> {
    NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) {
      let address = try SocketAddress.makeAddressResolvingHost(host.text, port: port)
      guard !ProxyDestination.isBound(scheme: scheme, host: host, port: port, bindings: shared.bindings),
            let refusal = address.ipAddress.flatMap(ProxyDestination.refusal(address:)) else { return address }
      throw DestinationRefused(reason: "\(host):\(port) is not for the sandboxed command to reach: \(refusal)\(host.kind == .name ? " (\(host) resolves there)" : "") — --allow-connect opens a service there")
    }
  }

  /// Writes `200 Connection Established`.
  private static func established(_ channel: any Channel) -> EventLoopFuture<Void> {
    let head = HTTPResponseHead(version: .http1_1, status: .init(statusCode: 200, reasonPhrase: "Connection Established"),
                                headers: ["Content-Length": "0"])
    channel.write(HTTPServerResponsePart.head(head), promise: nil)
    return channel.writeAndFlush(HTTPServerResponsePart.end(nil))
  }

  private func tunnel(context: ChannelHandlerContext, to peer: any Channel) {
    let (local, remote) = TunnelGlue.pair()
    do {
      try peer.pipeline.syncOperations.addHandler(remote)
      try context.pipeline.syncOperations.addHandler(local)
      removeHTTP(context: context)
    } catch {
      peer.close(promise: nil)
      context.close(promise: nil)
    }
  }

  private func intercept(context: ChannelHandlerContext, host: ProxyHost, port: Int, connect: String) {
    let (channel, shared, connection) = (context.channel, shared, connection)
    let sni = ByteToMessageHandler(SNIHandler { result in
      var name: String?
      if case .hostname(let hostname) = result { name = hostname }
      do {
        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: try shared.authority.serverContext(for: host)))
        try Self.install(on: channel, mode: .intercepted(host: host, port: port, connect: connect, sni: name), shared: shared, connection: connection)
        return channel.eventLoop.makeSucceededVoidFuture()
      } catch {
        channel.close(promise: nil)
        return channel.eventLoop.makeFailedFuture(error)
      }
    })
    do {
      try context.pipeline.syncOperations.addHandler(sni)
      removeHTTP(context: context)
    } catch {
      context.close(promise: nil)
    }
  }

  /// Removes the HTTP handlers and this one; the decoder last, so bytes it
  /// holds go on to what replaced them.
  private func removeHTTP(context: ChannelHandlerContext) {
    let operations = context.pipeline.syncOperations
    operations.removeHandler(handlers.pipelining, promise: nil)
    operations.removeHandler(handlers.errors, promise: nil)
    operations.removeHandler(handlers.encoder, promise: nil)
    operations.removeHandler(context: context, promise: nil)
    operations.removeHandler(handlers.decoder, promise: nil)
  }

  // MARK: Upstream

  /// Sends `job` upstream and its answer back through ``UpstreamAnswer``,
  /// whose callbacks run on the connection's own event loop (the upstream
  /// connection is any kept one of its origin; docs/performance.md).
  private static func start(_ job: Forwarding, channel: any Channel, shared: ProxyServer.Shared, connection: ConnectionInfo,
                            audit: @escaping @Sendable (Int, String?) -> Void) {
    connection.requestStarted()
    let delegate = UpstreamAnswer(job: job, channel: channel, masker: shared.masker, audit: audit) { connection.requestEnded() }
    guard let host = ProxyHost(job.request.host) else { return channel.eventLoop.execute { delegate.abandon(DestinationRefused(reason: "no host")) } }
    destination(host, port: job.request.port, scheme: job.request.scheme, shared: shared, eventLoop: channel.eventLoop).whenComplete { result in
      do {
        // Plain http goes to the address checked; https to the name, whose
        // certificate proves it (a name that moved meanwhile fails there).
        let address = try result.get()
        let name = job.request.scheme == "https" ? host.text : (address.ipAddress.flatMap(ProxyHost.init)?.text ?? host.text)
        var headers = HTTPHeaders()
        for header in job.forward.headers { headers.add(name: header.name, value: header.value) }
        let request = HTTP1Request(method: job.method, scheme: job.request.scheme, host: name, port: job.request.port, target: job.forward.target,
                                   headers: headers, body: job.body.readableBytes > 0 ? .bytes(job.body) : nil)
        delegate.exchange = shared.upstream.execute(request, delegate: delegate, on: channel.eventLoop)
      } catch {
        channel.eventLoop.execute { delegate.abandon(error) }
      }
    }
  }

  /// Response headers that describe the upstream connection, not the answer.
  static let hopByHop: Set<String> = ["connection", "keep-alive", "proxy-authenticate", "proxy-connection", "te", "trailer",
                                              "transfer-encoding", "upgrade"]

  /// odr's own answer: `status`, the reason as plain text.
  @discardableResult
  static func answer(_ channel: any Channel, status: Int, reason: String, version: HTTPVersion, keepAlive: Bool,
                             extra: [(String, String)] = []) -> EventLoopFuture<Void> {
    let text = "odr exec --proxy: \(reason)\n"
    var headers = HTTPHeaders([("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", "\(text.utf8.count)")] + extra)
    if !keepAlive { headers.add(name: "Connection", value: "close") }
    channel.write(HTTPServerResponsePart.head(HTTPResponseHead(version: version, status: .init(statusCode: status), headers: headers)), promise: nil)
    channel.write(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: text))), promise: nil)
    let done = channel.writeAndFlush(HTTPServerResponsePart.end(nil))
    if !keepAlive { done.whenComplete { _ in channel.close(promise: nil) } }
    return done
  }

  private static func headers(_ headers: HTTPHeaders) -> [ProxyRequest.Header] {
    headers.map { ProxyRequest.Header($0.name, $0.value) }
  }

  /// `scheme://authority/target` split; nil when `uri` is not absolute-form.
  static func absoluteForm(_ uri: String) -> (scheme: String, host: String, port: Int, target: String)? {
    let lower = uri.lowercased()
    guard let scheme = ["http", "https"].first(where: { lower.hasPrefix($0 + "://") }) else { return nil }
    let rest = uri.dropFirst(scheme.count + 3)
    let end = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
    let authority = rest[..<end]
    guard !authority.contains("@") else { return nil }
    let (host, given) = ProxyDecision.authority(String(authority))
    let port = given ?? (scheme == "https" ? 443 : 80)
    guard (1...65535).contains(port) else { return nil }
    let target = String(rest[end...])
    return (scheme, host, port, target.isEmpty ? "/" : target.hasPrefix("?") ? "/" + target : target)
  }
}

/// What one connection remembers across requests: whether it has shown
/// the run's token, how many answers are on their way to it, and the
/// process at its other end, looked up once.
final class ConnectionInfo: Sendable {
  private let found = Mutex<String??>(nil)
  private let authenticated = Atomic<Bool>(false)
  private let inFlight = Atomic<Int>(0)

  var isAuthenticated: Bool { authenticated.load(ordering: .relaxed) }
  func markAuthenticated() { authenticated.store(true, ordering: .relaxed) }
  var hasRequestInFlight: Bool { inFlight.load(ordering: .relaxed) > 0 }
  func requestStarted() { inFlight.wrappingAdd(1, ordering: .relaxed) }
  func requestEnded() { inFlight.wrappingSubtract(1, ordering: .relaxed) }

  func process(_ channel: any Channel, child: pid_t) -> String? {
    found.withLock { found in
      if let known = found { return known }
      let process = channel.remoteAddress?.port.flatMap { ConnectingProcess.describe(clientPort: $0, root: child) }
      found = .some(process)
      return process
    }
  }
}
