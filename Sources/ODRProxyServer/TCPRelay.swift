import NIOCore
import NIOPosix
import ODRBase

/// A destination `odr exec --proxy --allow-connect` opens to the sandboxed
/// command: each connection accepted on a socket the sandbox handed over is
/// carried, untouched, to `host:port` outside (a database, a service that
/// does not speak HTTP). No key goes this way: the command holds none.
public final class TCPRelay: Sendable {
  private let channel: any Channel

  private init(channel: any Channel) {
    self.channel = channel
  }

  /// Starts relaying connections accepted on `listening` (it owns the socket).
  public static func start(listening: Int32, to host: String, port: Int) async throws -> TCPRelay {
    let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
      .childChannelOption(.allowRemoteHalfClosure, value: true)
      .childChannelOption(.autoRead, value: false)
      .childChannelInitializer { inside in
        ClientBootstrap(group: inside.eventLoop)
          .connectTimeout(.seconds(10))
          .channelOption(.allowRemoteHalfClosure, value: true)
          .connect(host: host, port: port)
          .flatMap { outside in
            let (near, far) = TunnelGlue.pair()
            return inside.eventLoop.makeCompletedFuture {
              try inside.pipeline.syncOperations.addHandler(near)
              try outside.pipeline.syncOperations.addHandler(far)
              // Nothing was read before both ends were glued (a client that
              // speaks first, as SSH does, loses no byte).
              try inside.syncOptions?.setOption(.autoRead, value: true)
            }
          }
          .flatMapErrorThrowing { error in
            inside.close(promise: nil)
            throw error
          }
      }
      .withBoundSocket(listening).get()
    return TCPRelay(channel: channel)
  }

  /// Stops accepting; connections already relayed end with the run.
  public func stop() async {
    await droppingAsync(.cleanup) { try await channel.close() }
  }
}
