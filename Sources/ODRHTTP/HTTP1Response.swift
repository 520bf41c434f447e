public import NIOCore
public import NIOHTTP1

/// An answer of ``HTTP1Client/execute(_:)``: its head, and its body as it
/// arrives.
public struct HTTP1Response: Sendable {
  public let status: HTTPResponseStatus
  /// As the server sent them.
  public let headers: HTTPHeaders
  /// The body's bytes as they arrive; the next are read from the socket
  /// once these are taken.
  public let body: HTTP1Body
}

/// The body of an ``HTTP1Response``: its bytes as they arrive.
public struct HTTP1Body: AsyncSequence, Sendable {
  public typealias Element = ByteBuffer
  typealias Sequence = NIOThrowingAsyncSequenceProducer<
    ByteBuffer, any Error, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark, HTTP1AsyncReceiver.Demand>
  private let sequence: Sequence

  init(_ sequence: Sequence) { self.sequence = sequence }

  public struct AsyncIterator: AsyncIteratorProtocol {
    var base: Sequence.AsyncIterator
    public mutating func next() async throws -> ByteBuffer? { try await base.next() }
  }

  public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: sequence.makeAsyncIterator()) }

  /// The whole body, refused when longer than `limit` bytes.
  public func collect(upTo limit: Int) async throws -> ByteBuffer {
    var all = ByteBuffer()
    for try await var part in self {
      guard all.readableBytes + part.readableBytes <= limit else { throw HTTP1BodyTooLong(limit: limit) }
      all.writeBuffer(&part)
    }
    return all
  }
}

/// A body longer than its reader allowed.
public struct HTTP1BodyTooLong: Error, CustomStringConvertible {
  public let limit: Int
  public var description: String { "the body is longer than \(limit) bytes" }
}
