import NIOCore

/// One end of a tunnel: bytes read on its channel are written to its
/// partner's, with back-pressure (a side reads only while the other can
/// write) and each side's close reaching the other. CONNECT to a host no
/// key is bound to is carried this way, untouched.
final class TunnelGlue: ChannelDuplexHandler, RemovableChannelHandler {
  typealias InboundIn = NIOAny
  typealias OutboundIn = NIOAny
  typealias OutboundOut = NIOAny

  private var partner: TunnelGlue?
  private var context: ChannelHandlerContext?
  private var pendingRead = false

  private init() {}

  /// Two ends, each the other's partner.
  static func pair() -> (TunnelGlue, TunnelGlue) {
    let first = TunnelGlue()
    let second = TunnelGlue()
    first.partner = second
    second.partner = first
    return (first, second)
  }

  func handlerAdded(context: ChannelHandlerContext) {
    self.context = context
  }

  func handlerRemoved(context: ChannelHandlerContext) {
    self.context = nil
    partner = nil
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    partner?.partnerWrite(data)
  }

  func channelReadComplete(context: ChannelHandlerContext) {
    partner?.partnerFlush()
  }

  func channelInactive(context: ChannelHandlerContext) {
    partner?.partnerClose()
  }

  func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
    if let event = event as? ChannelEvent, case .inputClosed = event {
      partner?.partnerHalfClose()
    }
    context.fireUserInboundEventTriggered(event)
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    context.close(promise: nil)
  }

  func channelWritabilityChanged(context: ChannelHandlerContext) {
    if context.channel.isWritable { partner?.partnerBecameWritable() }
  }

  func read(context: ChannelHandlerContext) {
    if let partner, partner.partnerWritable {
      context.read()
    } else {
      pendingRead = true
    }
  }

  // MARK: Called by the partner, on the same event loop.

  private func partnerWrite(_ data: NIOAny) { context?.write(data, promise: nil) }
  private func partnerFlush() { context?.flush() }
  private func partnerClose() { context?.close(promise: nil) }
  private func partnerHalfClose() { context?.close(mode: .output, promise: nil) }
  private var partnerWritable: Bool { context?.channel.isWritable ?? false }

  private func partnerBecameWritable() {
    if pendingRead {
      pendingRead = false
      context?.read()
    }
  }
}
