import NIOCore
import NIOHTTP1
import Synchronization

/// One request of ``HTTP1Client`` on its way: the handle that cancels it,
/// and what makes sure its delegate hears of its end exactly once.
public final class HTTP1Exchange: Sendable {
  let request: HTTP1Request
  let delegate: any HTTP1ResponseDelegate
  let eventLoop: any EventLoop
  private struct State {
    var connection: HTTP1Connection?
    var cancelled = false
    var ended = false
  }
  private let state = Mutex(State())

  init(request: HTTP1Request, delegate: any HTTP1ResponseDelegate, eventLoop: any EventLoop) {
    self.request = request
    self.delegate = delegate
    self.eventLoop = eventLoop
  }

  /// Stops the request: its connection is closed, its delegate told
  /// ``HTTP1Client/Failure/cancelled`` (unless it had ended).
  public func cancel() {
    let connection = state.withLock { state in
      state.cancelled = true
      return state.connection
    }
    if let connection { connection.cancel(self) } else { fail(HTTP1Client.Failure.cancelled) }
  }

  /// Runs on `connection` from now; false when it was cancelled already.
  func attach(_ connection: HTTP1Connection?) -> Bool {
    state.withLock { state in
      state.connection = connection
      return !state.cancelled
    }
  }

  /// Whether the exchange has ended (finished or failed).
  var hasEnded: Bool { state.withLock { $0.ended } }

  /// Marks the end; true the first time only.
  private func end() -> Bool {
    state.withLock { state in
      defer { state.ended = true }
      return !state.ended
    }
  }

  func head(_ head: HTTPResponseHead) -> EventLoopFuture<Void> {
    eventLoop.flatSubmit { [delegate] in delegate.didReceiveHead(head) }
  }

  func body(_ buffer: ByteBuffer) -> EventLoopFuture<Void> {
    eventLoop.flatSubmit { [delegate] in delegate.didReceiveBodyPart(buffer) }
  }

  func finish() {
    guard end() else { return }
    eventLoop.execute { [delegate] in delegate.didFinish() }
  }

  func fail(_ error: any Error) {
    guard end() else { return }
    eventLoop.execute { [delegate] in delegate.didFail(error) }
  }
}
