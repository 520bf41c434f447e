import NIOCore
import NIOHTTP1
import Synchronization

/// The delegate behind ``HTTP1Client/execute(_:)``: the head completes a
/// promise, the body flows into an async sequence whose consumer's pace is
/// the connection's (NIO's producer with a high/low watermark).
final class HTTP1AsyncReceiver: HTTP1ResponseDelegate, @unchecked Sendable {
  typealias Source = NIOThrowingAsyncSequenceProducer<
    ByteBuffer, any Error, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark, Demand>.Source

  /// Told by the sequence when its consumer wants more, or has gone.
  final class Demand: NIOAsyncSequenceProducerDelegate, Sendable {
    let eventLoop: any EventLoop
    private enum State {
      case flowing
      /// The consumer asked for more before the producer waited.
      case asked
      /// The producer was told to stop; the promise resumes it.
      case waiting(EventLoopPromise<Void>)
      case gone
    }
    private let state = Mutex(State.flowing)
    private let gone = Mutex<(@Sendable () -> Void)?>(nil)

    init(eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    /// Completes when the consumer wants more (at once if it asked
    /// meanwhile); every part yielded while stopped waits for the same.
    func wait() -> EventLoopFuture<Void> {
      state.withLock { state in
        switch state {
        case .flowing:
          let promise = eventLoop.makePromise(of: Void.self)
          state = .waiting(promise)
          return promise.futureResult
        case .asked:
          // produceMore came between the yield and this wait
          state = .flowing
          return eventLoop.makeSucceededVoidFuture()
        case .waiting(let promise):
          return promise.futureResult
        case .gone:
          return eventLoop.makeFailedFuture(HTTP1Client.Failure.cancelled)
        }
      }
    }

    func onTermination(_ action: @escaping @Sendable () -> Void) { gone.withLock { $0 = action } }

    func produceMore() {
      let waiting: EventLoopPromise<Void>? = state.withLock { state in
        switch state {
        case .waiting(let promise):
          state = .flowing
          return promise
        case .flowing, .asked:
          // asked before the producer waits: its next wait returns at once
          state = .asked
          return nil
        case .gone:
          return nil
        }
      }
      waiting?.succeed()
    }

    func didTerminate() {
      let waiting: EventLoopPromise<Void>? = state.withLock { state in
        defer { state = .gone }
        if case .waiting(let promise) = state { return promise }
        return nil
      }
      waiting?.fail(HTTP1Client.Failure.cancelled)
      gone.withLock { $0 }?()
    }
  }

  let head: EventLoopPromise<HTTP1Response>
  private let demand: Demand
  private let source: Source
  private let body: HTTP1Body
  private var headSent = false

  init(eventLoop: any EventLoop) {
    head = eventLoop.makePromise()
    demand = Demand(eventLoop: eventLoop)
    let made = NIOThrowingAsyncSequenceProducer.makeSequence(
      elementType: ByteBuffer.self, failureType: (any Error).self,
      backPressureStrategy: NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark(lowWatermark: 2, highWatermark: 8), finishOnDeinit: false, delegate: demand)
    source = made.source
    body = HTTP1Body(made.sequence)
  }

  /// Cancels `exchange` when the body's consumer goes before its end.
  func watch(_ exchange: HTTP1Exchange) {
    demand.onTermination { if !exchange.hasEnded { exchange.cancel() } }
  }

  func didReceiveHead(_ response: HTTPResponseHead) -> EventLoopFuture<Void> {
    headSent = true
    head.succeed(HTTP1Response(status: response.status, headers: response.headers, body: body))
    return demand.eventLoop.makeSucceededVoidFuture()
  }

  func didReceiveBodyPart(_ buffer: ByteBuffer) -> EventLoopFuture<Void> {
    switch source.yield(buffer) {
    case .produceMore: return demand.eventLoop.makeSucceededVoidFuture()
    case .stopProducing: return demand.wait()
    case .dropped: return demand.eventLoop.makeFailedFuture(HTTP1Client.Failure.cancelled)
    }
  }

  func didFinish() {
    source.finish()
  }

  func didFail(_ error: any Error) {
    if !headSent { head.fail(error) }
    source.finish(error)
  }
}
