import AsyncHTTPClient
import FoundationEssentials
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import ODRBase
import ODRKeys
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
    /// Connections open at once (more are closed on accept).
    public var connections = 256
    /// A request's headers, in bytes (also each one; at most 256 of them).
    public var headerBytes = 64 * 1024
    /// A request body, in bytes (bodies are read whole to be checked).
    public var bodyBytes = 32 * 1024 * 1024
    /// How long a connection may stay idle.
    public var idle: Duration = .seconds(120)

    public init() {}
  }

  /// The port on 127.0.0.1.
  public let port: Int
  private let channel: any Channel
  private let shared: Shared

  /// Starts a proxy for `bindings`. `trustRoots`: the PEM file of what odr
  /// trusts upstream (nil: the system's).
  public static func start(bindings: [ProxyBinding], credentials: ProxyCredentials, bases: [ProxyBase], authority: RunAuthority,
                           trustRoots: String?, log: ProxyAuditLog, limits: Limits = Limits()) async throws -> ProxyServer {
    let shared = try Shared(bindings: bindings, credentials: credentials, bases: bases, authority: authority,
                            trustRoots: trustRoots, log: log, limits: limits)
    let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .serverChannelOption(.backlog, value: 256)
      .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
      .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
      .childChannelOption(.allowRemoteHalfClosure, value: true)
      .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
          guard shared.open() else {
            // Over the limit: closed as soon as it is active.
            try channel.pipeline.syncOperations.addHandler(CloseOnActive())
            return
          }
          channel.closeFuture.whenComplete { _ in shared.closed() }
          try channel.pipeline.syncOperations.addHandler(IdleStateHandler(readTimeout: .nanoseconds(Int64(limits.idle.components.seconds) * 1_000_000_000)))
          try ProxyConnectionHandler.install(on: channel, mode: .listener, shared: shared)
        }
      }
      .bind(host: "127.0.0.1", port: 0).get()
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
    await droppingAsync(.cleanup) { try await shared.upstream.shutdown() }
  }

  /// What every connection of the run shares.
  final class Shared: Sendable {
    let bindings: [ProxyBinding]
    let boundHosts: Set<ProxyHost>
    let credentials: ProxyCredentials
    let bases: [ProxyBase]
    let authority: RunAuthority
    let upstream: HTTPClient
    let log: ProxyAuditLog
    let limits: Limits
    /// What answers come back through (copied fresh for each): each value
    /// shown as its placeholder.
    let masker: SecretMasker
    let child = Atomic<pid_t>(0)
    private let connections = Atomic<Int>(0)

    init(bindings: [ProxyBinding], credentials: ProxyCredentials, bases: [ProxyBase], authority: RunAuthority,
         trustRoots: String?, log: ProxyAuditLog, limits: Limits) throws {
      self.bindings = bindings
      boundHosts = Set(bindings.flatMap { ($0.key.metadata.hosts ?? []).compactMap(ProxyHost.init) })
      self.credentials = credentials
      self.bases = bases
      self.authority = authority
      self.log = log
      self.limits = limits
      masker = SecretMasker(replacing: bindings.map { ($0.key.value, $0.placeholder.text) })
      var tls = TLSConfiguration.makeClientConfiguration()
      if let trustRoots { tls.trustRoots = .file(trustRoots) }
      // Closing a connection whose answer is still coming (its client left)
      // waits this long for the server's close_notify; the default 5 s kept
      // `odr exec --proxy` running that long after its command had ended.
      tls.shutdownTimeout = .milliseconds(100)
      var configuration = HTTPClient.Configuration(
        tlsConfiguration: tls, redirectConfiguration: .disallow,
        timeout: HTTPClient.Configuration.Timeout(connect: .seconds(10), read: .seconds(300)), decompression: .disabled)
      configuration.httpVersion = .http1Only
      configuration.connectionPool.retryConnectionEstablishment = false
      upstream = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func open() -> Bool {
      let count = connections.wrappingAdd(1, ordering: .relaxed).newValue
      if count > limits.connections {
        connections.wrappingSubtract(1, ordering: .relaxed)
        return false
      }
      return true
    }

    func closed() {
      connections.wrappingSubtract(1, ordering: .relaxed)
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
