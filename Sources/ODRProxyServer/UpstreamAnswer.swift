import NIOCore
import NIOHTTP1
import ODRBase
import ODRHTTP
import ODRKeyFormat
import ODRProxy

/// The upstream's answer to one forwarded request, written to the child
/// as it arrives: headers and body through the run's masker (each value
/// shown as its placeholder), framing rebuilt (chunked unless the answer
/// has no body), back-pressure from the child's connection. A compressed
/// answer to any request to a bound host is refused (502): the masker
/// could not read it.
///
/// Every callback runs on the child connection's event loop (the client
/// is asked for it), which confines its state.
final class UpstreamAnswer: HTTP1ResponseDelegate, @unchecked Sendable {
  /// The request on its way (set on the event loop, before any callback).
  var exchange: HTTP1Exchange?

  private let job: ProxyConnectionHandler.Forwarding
  private let channel: any Channel
  private let audit: @Sendable (Int, String?) -> Void
  private var masker: SecretMasker
  private let template: SecretMasker
  private var started = false
  private var refused = false
  private var bodiless = false
  private var close: Bool
  /// What is written to the child is flushed once the event loop is done
  /// with what the upstream sent (head, body and end of a small answer go
  /// in one write; a streamed answer's parts as they come), and awaited
  /// every ``flushBytes``: back-pressure from the child's connection.
  private var flushScheduled = false
  private var unawaited = 0
  static let flushBytes = 64 * 1024

  /// Called once, when the answer is out or has failed: the connection's
  /// idle limit counts from then.
  private var ended: (() -> Void)?

  init(job: ProxyConnectionHandler.Forwarding, channel: any Channel, masker: SecretMasker, audit: @escaping @Sendable (Int, String?) -> Void,
       ended: @escaping () -> Void) {
    self.job = job
    self.channel = channel
    self.audit = audit
    self.masker = masker
    self.ended = ended
    template = masker
    close = !job.keepAlive || job.version == .http1_0
  }

  private func end() {
    ended?()
    ended = nil
  }

  func didReceiveHead(_ head: HTTPResponseHead) -> EventLoopFuture<Void> {
    if job.forward.toBoundHost, let coding = Self.coding(head.headers) {
      refused = true
      fail("the answer of a host a key is bound to is encoded (\(ProxyDecision.printable(coding))), which odr cannot mask")
      exchange?.cancel()
      return channel.eventLoop.makeSucceededVoidFuture()
    }
    audit(Int(head.status.code), nil)
    let code = head.status.code
    bodiless = job.method == .HEAD || code == 204 || code == 304 || (100..<200).contains(code)
    var headers = HTTPHeaders()
    for (name, value) in head.headers {
      let lower = name.lowercased()
      if ProxyConnectionHandler.hopByHop.contains(lower) || (lower == "content-length" && !bodiless) { continue }
      headers.add(name: masked(name), value: masked(value))
    }
    if close { headers.replaceOrAdd(name: "Connection", value: "close") }
    started = true
    writeSoon(.head(HTTPResponseHead(version: job.version, status: head.status, headers: headers)))
    return channel.eventLoop.makeSucceededVoidFuture()
  }

  func didReceiveBodyPart(_ buffer: ByteBuffer) -> EventLoopFuture<Void> {
    // The command left: the upstream answer (a long poll, a stream) stops too.
    guard channel.isActive else { return channel.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel) }
    guard !refused, !bodiless else { return channel.eventLoop.makeSucceededVoidFuture() }
    let masked = masker.mask(buffer.readableBytesView)
    guard !masked.isEmpty else { return channel.eventLoop.makeSucceededVoidFuture() }
    unawaited += masked.count
    let part = HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: masked)))
    guard unawaited >= Self.flushBytes else {
      writeSoon(part)
      return channel.eventLoop.makeSucceededVoidFuture()
    }
    unawaited = 0
    return channel.writeAndFlush(part)
  }

  /// `text` with each value shown as its placeholder.
  private func masked(_ text: String) -> String {
    var masker = template
    return String(decoding: masker.mask(Array(text.utf8)) + masker.finish(), as: UTF8.self)
  }

  /// A content or transfer coding of the answer other than identity (and
  /// chunked framing, which is undone here), every occurrence read; nil
  /// when there is none.
  static func coding(_ headers: HTTPHeaders) -> String? {
    let contents = headers["content-encoding"].flatMap { $0.split(separator: ",") }.map { ProxyDecision.trimmed($0).lowercased() }
    let transfers = headers["transfer-encoding"].flatMap { $0.split(separator: ",") }.map { ProxyDecision.trimmed($0).lowercased() }
    return (contents.filter { $0 != "identity" && !$0.isEmpty } + transfers.filter { !["chunked", "identity", ""].contains($0) }).first
  }

  /// Writes `part`, flushed when the event loop has run what is queued now.
  private func writeSoon(_ part: HTTPServerResponsePart) {
    channel.write(part, promise: nil)
    guard !flushScheduled else { return }
    flushScheduled = true
    channel.eventLoop.execute { [self] in
      flushScheduled = false
      channel.flush()
    }
  }

  func didFinish() {
    defer { end() }
    guard !refused else { return }
    if !bodiless {
      let rest = masker.finish()
      if !rest.isEmpty { channel.write(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: rest))), promise: nil) }
    }
    let done = channel.writeAndFlush(HTTPServerResponsePart.end(nil))
    if close {
      let channel = channel
      done.whenComplete { _ in channel.close(promise: nil) }
    }
  }

  func didFail(_ error: any Error) {
    defer { end() }
    guard !refused else { return }
    fail(error)
  }

  /// The request could not be sent at all: a 502 saying why (403 for a
  /// destination the sandboxed command may not reach).
  func abandon(_ error: any Error) {
    if let refused = error as? ProxyConnectionHandler.DestinationRefused {
      started = true
      audit(403, refused.reason)
      ProxyConnectionHandler.answer(channel, status: 403, reason: refused.reason, version: job.version, keepAlive: job.keepAlive)
    } else {
      fail(error)
    }
    end()
  }

  /// The request failed before or while its answer came: a 502 saying why
  /// (masked: an error may quote a URL whose query carries a key), or, once
  /// the answer has begun, the connection closed.
  func fail(_ error: any Error) {
    var errorMasker = template
    let text = String(decoding: errorMasker.mask(Array("\(error)".utf8)) + errorMasker.finish(), as: UTF8.self)
    fail("cannot get an answer from \(job.request.host):\(job.request.port) (\(text))")
  }

  private func fail(_ reason: String) {
    guard !started else {
      channel.close(promise: nil)
      return
    }
    started = true
    audit(502, reason)
    ProxyConnectionHandler.answer(channel, status: 502, reason: reason, version: job.version, keepAlive: false)
  }
}
