import NIOCore
import NIOHTTP1
import NIOSSL
import NIOTLS

/// One connection of ``HTTP1Client``: sends one request at a time and
/// hands its answer to the exchange's delegate, reading from the socket
/// only when the delegate has taken what came (the channel does not read
/// by itself). Its state lives on the channel's event loop.
final class HTTP1Connection: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
  typealias InboundIn = HTTPClientResponsePart

  let channel: any Channel
  let origin: Origin
  private let client: HTTP1Client
  private var context: ChannelHandlerContext?
  private var current: HTTP1Exchange?
  /// Asked when a kept connection fails before any answer: true when it
  /// sent the request again elsewhere.
  private var retry: ((any Error) -> Bool)?
  private var answered = false
  private var keepAlive = false
  private var written = false
  /// Delegate callbacks not yet completed: reading waits for none.
  private var pending = 0
  private var handshake: EventLoopPromise<HTTP1Connection>?
  /// Fails the exchange when no byte comes within the client's stall limit
  /// of asking for more.
  private var stallTimer: Scheduled<Void>?

  init(channel: any Channel, origin: Origin, client: HTTP1Client) {
    self.channel = channel
    self.origin = origin
    self.client = client
  }

  func handlerAdded(context: ChannelHandlerContext) { self.context = context }
  func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

  /// Completes when the TLS handshake has, within `limit`.
  func handshake(within limit: TimeAmount) -> EventLoopFuture<HTTP1Connection> {
    channel.eventLoop.flatSubmit { [self] in
      guard channel.isActive else { return channel.eventLoop.makeFailedFuture(HTTP1Client.Failure.closedDuringHandshake) }
      let promise = channel.eventLoop.makePromise(of: HTTP1Connection.self)
      handshake = promise
      let timer = channel.eventLoop.scheduleTask(in: limit) { [self] in
        handshake = nil
        promise.fail(HTTP1Client.Failure.tlsHandshakeTimeout)
        channel.close(promise: nil)
      }
      promise.futureResult.whenComplete { _ in timer.cancel() }
      context?.read()
      return promise.futureResult
    }
  }

  // MARK: Requests

  /// Sends `exchange`'s request on this connection; `retry` as above.
  func start(_ exchange: HTTP1Exchange, retry: @escaping @Sendable (any Error) -> Bool) {
    channel.eventLoop.execute { [self] in
      guard exchange.attach(self) else {
        // cancelled while connecting: nothing was sent, the connection serves the next
        if current == nil, channel.isActive { client.keep(self) }
        return exchange.fail(HTTP1Client.Failure.cancelled)
      }
      guard let context, channel.isActive else {
        if !retry(HTTP1Client.Failure.closedEarly) { exchange.fail(HTTP1Client.Failure.closedEarly) }
        return
      }
      current = exchange
      self.retry = retry
      (answered, keepAlive, written, pending) = (false, false, false, 0)
      let request = exchange.request
      context.write(outbound(.head(request.head)), promise: nil)
      switch request.body {
      case .bytes(let buffer)?:
        context.write(outbound(.body(.byteBuffer(buffer))), promise: nil)
        end(context)
      case .file(let path, let length)?:
        context.flush()
        stream(path, length: length, for: exchange)
      case nil:
        end(context)
      }
      // The stall limit counts from the request's end (an upload sends
      // for as long as it takes); an early answer is read meanwhile.
      context.read()
    }
  }

  /// Asks the socket for more, under the stall limit while an answer is due.
  private func readMore() {
    guard let context else { return }
    context.read()
    guard let stall = client.configuration.stall, current != nil else { return }
    stallTimer?.cancel()
    stallTimer = channel.eventLoop.scheduleTask(in: stall) { [self] in
      stallTimer = nil
      fail(HTTP1Client.Failure.stalled)
    }
  }

  private func outbound(_ part: HTTPClientRequestPart) -> NIOAny { NIOAny(part) }

  private func end(_ context: ChannelHandlerContext) {
    context.writeAndFlush(outbound(.end(nil))).whenSuccess { [self] in
      written = true
      if current == nil {
        release()
      } else if pending == 0 {
        readMore()
      }
    }
  }

  /// Streams `length` bytes of the file, each chunk written before the next
  /// is read; a file shorter than said fails the request (its length went
  /// out in the head). Stops when the exchange has ended (an early answer).
  private func stream(_ path: String, length: Int64, for exchange: HTTP1Exchange) {
    let channel = channel
    Task {
      do {
        try await FileChunks.send(path, length: length) { chunk in
          guard !exchange.hasEnded else { throw HTTP1Client.Failure.cancelled }
          try await channel.writeAndFlush(HTTPClientRequestPart.body(.byteBuffer(chunk))).get()
        }
        channel.eventLoop.execute { [self] in
          guard current === exchange, let context else { return }
          end(context)
        }
      } catch {
        channel.eventLoop.execute { [self] in if current === exchange { fail(error) } }
      }
    }
  }

  /// Closes the connection under `exchange` (cancelled).
  func cancel(_ exchange: HTTP1Exchange) {
    channel.eventLoop.execute { [self] in
      if current === exchange { fail(HTTP1Client.Failure.cancelled) } else { exchange.fail(HTTP1Client.Failure.cancelled) }
    }
  }

  // MARK: Answers

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    stallTimer?.cancel()
    stallTimer = nil
    guard let exchange = current else { return }
    switch unwrapInboundIn(data) {
    case .head(let head):
      answered = true
      keepAlive = head.isKeepAlive
      waitFor(exchange.head(head), of: exchange)
    case .body(let buffer):
      waitFor(exchange.body(buffer), of: exchange)
    case .end:
      current = nil
      retry = nil
      // kept before the receiver hears of the end, so that its next
      // request finds the connection; an answer that came before the
      // request's body was all sent (a refusal) ends the connection
      if written {
        release()
      } else if case .file = exchange.request.body {
        channel.close(promise: nil)
      }
      exchange.finish()
    }
  }

  /// Reads on once `future` (and every other callback of `exchange`
  /// pending) completes; a failed one (the receiver gave up) closes the
  /// connection. A completion that comes after its exchange ended (the
  /// connection may carry the next one by then) changes nothing.
  private func waitFor(_ future: EventLoopFuture<Void>, of exchange: HTTP1Exchange) {
    pending += 1
    future.hop(to: channel.eventLoop).whenComplete { [self] result in
      guard current === exchange else { return }
      pending -= 1
      if case .failure(let error) = result { return fail(error) }
      if pending == 0, current != nil { readMore() }
    }
  }

  func channelReadComplete(context: ChannelHandlerContext) {
    // The TLS handshake reads on; so does a read that gave no part while
    // an answer is due (the head not yet whole, TLS records, chunk framing).
    if handshake != nil {
      context.read()
    } else if current != nil, pending == 0 {
      readMore()
    }
  }

  /// After a complete exchange: kept for the next request, or closed.
  private func release() {
    guard current == nil else { return }
    if keepAlive, channel.isActive { client.keep(self) } else { channel.close(promise: nil) }
  }

  private func fail(_ error: any Error) {
    stallTimer?.cancel()
    stallTimer = nil
    let exchange = current
    current = nil
    channel.close(promise: nil)
    guard let exchange else { return }
    if !answered, let retry, retry(error) { return }
    exchange.fail(error)
  }

  func channelInactive(context: ChannelHandlerContext) {
    client.forget(self)
    handshake?.fail(HTTP1Client.Failure.closedDuringHandshake)
    handshake = nil
    fail(HTTP1Client.Failure.closedEarly)
    context.fireChannelInactive()
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    // A server that closes without TLS's close_notify: the close decides
    // (an answer framed by the close is complete; one cut short is not).
    if let tls = error as? NIOSSLError, case .uncleanShutdown = tls { return }
    if let parser = error as? HTTPParserError, parser == .invalidEOFState { return fail(HTTP1Client.Failure.closedEarly) }
    handshake?.fail(error)
    handshake = nil
    fail(error)
  }

  func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
    if let event = event as? TLSUserEvent, case .handshakeCompleted = event {
      handshake?.succeed(self)
      handshake = nil
    }
    context.fireUserInboundEventTriggered(event)
  }
}
