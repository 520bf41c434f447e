import FoundationEssentials
import NIOCore
import ODRHTTP
import NIOHTTP1
import NIOPosix
import NIOSSL
import ODRBase
import ODRKeyFormat
public import ODRProxy
import Synchronization

/// The proxy of one `odr exec --proxy` run, listening on 127.0.0.1 on a
/// port of its own: the child's HTTP clients reach it through
/// `HTTPS_PROXY`/`HTTP_PROXY` (with the run's token) or a base URL, and
/// every request that may carry a key is decided by ``ProxyDecision``.
///
/// - `CONNECT` to a host a key is bound to is intercepted: TLS ends here
///   with a leaf of the run's CA (``RunAuthority``), and each request inside
///   is decided and sent on over TLS of the proxy's own, verified against
///   what odr trusts. `CONNECT` elsewhere is tunnelled untouched.
/// - An absolute-form `http://` request is decided and sent on.
/// - `/<token>/NAME/…` on the proxy's own address goes to base NAME.
///
/// Answers to requests that carried a key come back through a
/// `SecretMasker` that shows each value as its placeholder. Bounds:
/// ``Limits``.
public final class ProxyServer: Sendable {
  /// What one run's proxy may be made to hold.
  public struct Limits: Sendable {
    /// Connections open at once that have shown the run's token (more are
    /// closed).
    public var connections = 256
    /// Connections open at once that have not shown it yet (more are
    /// closed on accept): a local user without the token cannot use up
    /// the run's connections.
    public var unauthenticated = 32
    /// How long a new connection has to show the token in its first request.
    public var authentication: Duration = .seconds(10)
    /// A request's headers, in bytes (also each one; at most 256 of them).
    public var headerBytes = 64 * 1024
    /// A request body, in bytes (bodies are read whole to be checked; only
    /// once the request's head has shown the token).
    public var bodyBytes = 32 * 1024 * 1024
    /// How long a connection may stay idle: nothing read from the child or
    /// written to it, and no answer on its way from upstream.
    public var idle: Duration = .seconds(120)

    public init() {}
  }

  /// Where the proxy listens.
  public enum Listener: Sendable {
    /// 127.0.0.1, on a port of its own (`--no-sandbox`: other local users
    /// can reach it; the token keeps them out).
    case loopback
    /// A socket already listening — the one the command's sandbox handed
    /// over, in the sandbox's own network namespace; the server owns it.
    case socket(Int32)
  }

  /// The port the proxy listens on (in the sandbox's namespace for ``Listener/socket(_:)``).
  public let port: Int
  private let channel: any Channel
  private let shared: Shared

  /// Starts a proxy for `bindings` on `listener`. `trustRoots`: the PEM
  /// file of what odr trusts upstream (nil: the system's).
  public static func start(_ listener: Listener, bindings: [ProxyBinding], credentials: ProxyCredentials, bases: [ProxyBase],
                           authority: RunAuthority, trustRoots: String?, log: ProxyAuditLog, limits: Limits = Limits()) async throws -> ProxyServer {
    let shared = try Shared(bindings: bindings, credentials: credentials, bases: bases, authority: authority,
                            trustRoots: trustRoots, log: log, limits: limits)
    let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .serverChannelOption(.backlog, value: 256)
      .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
      .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
      .childChannelOption(.allowRemoteHalfClosure, value: true)
      .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
          guard let connection = shared.open(channel) else {
            // Over the limit: closed as soon as it is active.
            try channel.pipeline.syncOperations.addHandler(CloseOnActive())
            return
          }
          try channel.pipeline.syncOperations.addHandler(IdleStateHandler(allTimeout: TimeAmount(limits.idle)))
          try ProxyConnectionHandler.install(on: channel, mode: .listener, shared: shared, connection: connection)
        }
      }
    let channel: any Channel
    switch listener {
    case .loopback: channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
    case .socket(let fd): channel = try await bootstrap.withBoundSocket(fd).get()
    }
    return ProxyServer(port: channel.localAddress?.port ?? 0, channel: channel, shared: shared)
  }

  private init(port: Int, channel: any Channel, shared: Shared) {
    self.port = port
    self.channel = channel
    self.shared = shared
  }

  /// The child whose process tree the audit lines' `process` is looked up in.
  public func setChild(_ pid: Int32) {
    shared.child.store(pid, ordering: .relaxed)
  }

  /// Stops listening and closes the upstream client.
  public func stop() async {
    await droppingAsync(.cleanup) { try await channel.close() }
    await shared.upstream.shutdown()
  }

  /// What every connection of the run shares.
  final class Shared: Sendable {
    let bindings: [ProxyBinding]
    let credentials: ProxyCredentials
    let bases: [ProxyBase]
    let authority: RunAuthority
    let upstream: HTTP1Client
    let log: ProxyAuditLog
    let limits: Limits
    /// What answers come back through (copied fresh for each): each value
    /// shown as its placeholder.
    let masker: SecretMasker
    let child = Atomic<pid_t>(0)
    private let connections = Atomic<Int>(0)
    private let pending = Atomic<Int>(0)

    init(bindings: [ProxyBinding], credentials: ProxyCredentials, bases: [ProxyBase], authority: RunAuthority,
         trustRoots: String?, log: ProxyAuditLog, limits: Limits) throws {
      self.bindings = bindings
      self.credentials = credentials
      self.bases = bases
      self.authority = authority
      self.log = log
      self.limits = limits
      masker = SecretMasker(replacing: bindings.map { ($0.key.value, $0.placeholder.text) })
      // No stall limit: an answer on its way is the command's to wait for
      // (a model thinking for minutes before its first token). Closing a
      // connection whose answer is still coming (its client left) waits
      // 100 ms for the server's close_notify; the default 5 s kept `odr
      // exec --proxy` running that long after its command had ended.
      upstream = HTTP1Client(configuration: .init(connect: .seconds(10), stall: nil, trustRoots: trustRoots, tlsShutdown: .milliseconds(100)))
    }

    /// A new connection's state, or nil when the connections that have
    /// not shown the token are at their limit. Until it shows the token it
    /// counts as unauthenticated and is closed after
    /// ``Limits/authentication``.
    func open(_ channel: any Channel) -> ConnectionInfo? {
      guard pending.wrappingAdd(1, ordering: .relaxed).newValue <= limits.unauthenticated else {
        pending.wrappingSubtract(1, ordering: .relaxed)
        return nil
      }
      let connection = ConnectionInfo()
      let deadline = channel.eventLoop.scheduleTask(in: TimeAmount(limits.authentication)) {
        if !connection.isAuthenticated { channel.close(promise: nil) }
      }
      channel.closeFuture.whenComplete { [self] _ in
        deadline.cancel()
        if connection.isAuthenticated { connections.wrappingSubtract(1, ordering: .relaxed) } else { pending.wrappingSubtract(1, ordering: .relaxed) }
      }
      return connection
    }

    /// Counts `connection` as authenticated from now on; false when the
    /// authenticated ones are at their limit (the caller closes it).
    func authenticate(_ connection: ConnectionInfo) -> Bool {
      guard !connection.isAuthenticated else { return true }
      guard connections.wrappingAdd(1, ordering: .relaxed).newValue <= limits.connections else {
        connections.wrappingSubtract(1, ordering: .relaxed)
        return false
      }
      connection.markAuthenticated()
      pending.wrappingSubtract(1, ordering: .relaxed)
      return true
    }
  }
}

/// Closes a connection as soon as it is active: one over the limit.
private final class CloseOnActive: ChannelInboundHandler, Sendable {
  typealias InboundIn = NIOAny

  func channelActive(context: ChannelHandlerContext) {
    context.close(promise: nil)
  }
}
