public import NIOCore
import NIOHTTP1
import ODRBase
import NIOPosix
import NIOSSL
import Synchronization

/// odr's one HTTP client: HTTP/1.1 on SwiftNIO, TLS by NIOSSL, made for a
/// command's few requests at a time — downloads, S3, and the answers
/// `odr exec --proxy` fetches for its command.
///
/// - Connections are kept alive per origin and reused (a request that finds
///   its kept connection closed by the server is sent again, once, on a new
///   one: nothing of it had been answered).
/// - Answers stream with back-pressure: the next bytes are read from the
///   socket only once the receiver has taken the last ones.
/// - Each phase has its limit: connecting (TLS included), and, when set, a
///   stall (no byte of the answer for that long).
/// - No redirects, no decompression, no HTTP/2: the callers decide what a
///   redirect may carry, and the proxy must see the bytes as sent.
public final class HTTP1Client: Sendable {
  public struct Configuration: Sendable {
    /// Establishing the connection and its TLS handshake.
    public var connect: TimeAmount
    /// The longest wait for the next bytes of an answer; nil: no limit.
    public var stall: TimeAmount?
    /// A PEM file of the certificates trusted for https (nil: the system's).
    public var trustRoots: String?
    /// How long closing a TLS connection waits for the server's close_notify.
    public var tlsShutdown: TimeAmount
    /// How long a kept connection waits for its next request before it is
    /// closed (a long-running app holds no socket it does not use).
    public var idle: TimeAmount

    public init(connect: TimeAmount = .seconds(10), stall: TimeAmount? = nil, trustRoots: String? = nil,
                tlsShutdown: TimeAmount = .milliseconds(100), idle: TimeAmount = .seconds(60)) {
      self.connect = connect
      self.stall = stall
      self.trustRoots = trustRoots
      self.tlsShutdown = tlsShutdown
      self.idle = idle
    }
  }

  /// Why a request failed, when it was the client's own limit or the
  /// server's close (the rest are SwiftNIO's and NIOSSL's own errors).
  public enum Failure: Error, Equatable, CustomStringConvertible {
    case connectTimeout
    case tlsHandshakeTimeout
    /// The server closed the connection before the TLS handshake ended:
    /// most often a server that does not speak TLS on that port.
    case closedDuringHandshake
    case stalled
    case closedEarly
    case cancelled

    public var description: String {
      switch self {
      case .connectTimeout: "connecting timed out"
      case .tlsHandshakeTimeout: "the TLS handshake timed out"
      case .closedDuringHandshake: "the server closed the connection during the TLS handshake"
      case .stalled: "the answer stalled"
      case .closedEarly: "the server closed the connection before the answer was complete"
      case .cancelled: "the request was cancelled"
      }
    }
  }

  let configuration: Configuration
  private let group: MultiThreadedEventLoopGroup = .singleton
  /// Made on the first https connection: loading the trust store costs
  /// ~10 ms, which a plain-http command never pays.
  private let tls = Mutex<Result<NIOSSLContext, any Error>?>(nil)
  /// The kept connections by origin, each with when it was kept: its idle
  /// timer closes it only if it has not been used (and kept again) since.
  private let idle = Mutex<[Origin: [(connection: HTTP1Connection, since: NIODeadline)]]>([:])

  public init(configuration: Configuration = Configuration()) {
    self.configuration = configuration
  }

  /// The TLS context, made once.
  private func tlsContext() throws -> NIOSSLContext {
    try tls.withLock { tls in
      if let made = tls { return made }
      let made = Result {
        var settings = TLSConfiguration.makeClientConfiguration()
        if let roots = configuration.trustRoots { settings.trustRoots = .file(roots) }
        settings.shutdownTimeout = configuration.tlsShutdown
        return try NIOSSLContext(configuration: settings)
      }
      tls = made
      return made
    }.get()
  }

  /// Closes the connections kept alive.
  public func shutdown() async {
    let kept = idle.withLock { idle in
      defer { idle = [:] }
      return idle.values.joined().map(\.connection)
    }
    for connection in kept { connection.channel.close(promise: nil) }
  }

  // MARK: Requests

  /// Sends `request`; the answer goes to `delegate`, each callback on
  /// `eventLoop`. The returned handle cancels it.
  @discardableResult
  public func execute(_ request: HTTP1Request, delegate: some HTTP1ResponseDelegate, on eventLoop: any EventLoop) -> HTTP1Exchange {
    let exchange = HTTP1Exchange(request: request, delegate: delegate, eventLoop: eventLoop)
    send(exchange, mayRetry: true)
    return exchange
  }

  /// Sends `request` and returns its answer's head once it arrives; the
  /// body streams from ``HTTP1Response/body`` (ended early: the
  /// connection is closed). Cancelling the task cancels the request.
  public func execute(_ request: HTTP1Request) async throws -> HTTP1Response {
    let eventLoop = group.any()
    let receiver = HTTP1AsyncReceiver(eventLoop: eventLoop)
    let exchange = execute(request, delegate: receiver, on: eventLoop)
    receiver.watch(exchange)
    return try await withTaskCancellationHandler {
      try await receiver.head.futureResult.get()
    } onCancel: {
      exchange.cancel()
    }
  }

  private func send(_ exchange: HTTP1Exchange, mayRetry: Bool) {
    let origin = Origin(exchange.request)
    if let kept = takeIdle(origin) {
      kept.start(exchange) { [self] error in
        // The server closed the kept connection (or failed it) before
        // answering: an idempotent request is sent again on a new one.
        guard mayRetry, [.GET, .HEAD, .PUT, .DELETE, .OPTIONS].contains(exchange.request.method) else { return false }
        if let failure = error as? Failure, failure == .cancelled || failure == .stalled { return false }
        send(exchange, mayRetry: false)
        return true
      }
      return
    }
    connect(origin).whenComplete { result in
      switch result {
      case .success(let connection): connection.start(exchange) { _ in false }
      case .failure(let error): exchange.fail(error)
      }
    }
  }

  private func takeIdle(_ origin: Origin) -> HTTP1Connection? {
    idle.withLock { idle in
      while let kept = idle[origin]?.popLast() {
        if kept.connection.channel.isActive { return kept.connection }
      }
      return nil
    }
  }

  /// Keeps `connection` for the next request to its origin, closed if
  /// none comes within the idle limit.
  func keep(_ connection: HTTP1Connection) {
    guard connection.channel.isActive else { return }
    let since = NIODeadline.now()
    idle.withLock { $0[connection.origin, default: []].append((connection, since)) }
    connection.channel.eventLoop.scheduleTask(in: configuration.idle) { [self] in
      let unused = idle.withLock { idle in
        guard let index = idle[connection.origin]?.firstIndex(where: { $0.connection === connection && $0.since == since }) else { return false }
        idle[connection.origin]?.remove(at: index)
        return true
      }
      if unused { connection.channel.close(promise: nil) }
    }
  }

  /// Forgets `connection` (closed).
  func forget(_ connection: HTTP1Connection) {
    idle.withLock { idle in idle[connection.origin]?.removeAll { $0.connection === connection } }
  }

  private func connect(_ origin: Origin) -> EventLoopFuture<HTTP1Connection> {
    let eventLoop = group.any()
    let context: NIOSSLContext?
    do { context = origin.secure ? try tlsContext() : nil } catch { return eventLoop.makeFailedFuture(error) }
    let configuration = configuration
    let connected = ClientBootstrap(group: eventLoop)
      .connectTimeout(configuration.connect)
      .channelOption(.autoRead, value: false)
      .channelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
          let operations = channel.pipeline.syncOperations
          if let context {
            let name = origin.host.isIPAddress ? nil : origin.host
            try operations.addHandler(try NIOSSLClientHandler(context: context, serverHostname: name))
          }
          try operations.addHTTPClientHandlers()
        }
      }
      .connect(host: origin.host, port: origin.port)
    return connected.flatMapErrorThrowing { error in
      if case ChannelError.connectTimeout = error { throw Failure.connectTimeout }
      throw error
    }.flatMap { [self] channel in
      let connection = HTTP1Connection(channel: channel, origin: origin, client: self)
      return channel.pipeline.addHandler(connection).map { connection }.flatMapErrorThrowing { error in
        // Closed before odr's handler was even added: during the handshake, for TLS.
        if origin.secure, case ChannelError.ioOnClosedChannel = error { throw Failure.closedDuringHandshake }
        throw error
      }.flatMap { connection in
        origin.secure ? connection.handshake(within: configuration.connect) : channel.eventLoop.makeSucceededFuture(connection)
      }
    }
  }
}

/// Where a connection goes: scheme, host and port.
struct Origin: Hashable, Sendable {
  let secure: Bool
  let host: String
  let port: Int

  init(_ request: HTTP1Request) {
    secure = request.scheme == "https"
    host = request.host
    port = request.port
  }
}

extension String {
  /// Whether this is an IPv4 or IPv6 address (no SNI is sent for those).
  var isIPAddress: Bool {
    dropping(.isTheAnswer) { try SocketAddress(ipAddress: self, port: 0) } != nil
  }
}
