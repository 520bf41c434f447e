public import FoundationEssentials

/// An observation: an `AsyncSequence` of updates that ends when its token
/// is cancelled (``cancel()``) or when the task iterating it is cancelled
/// (seed 002).
public struct ObservationStream<Element: Sendable>: AsyncSequence, Sendable {
  private let stream: AsyncStream<Element>
  private let continuation: AsyncStream<Element>.Continuation

  /// Makes an observation: `register` stores the continuation under its
  /// id, `onCancel` removes it when the observation ends.
  public init(register: (UUID, AsyncStream<Element>.Continuation) -> Void, onCancel: @escaping @Sendable (UUID) -> Void) {
    let id = UUID()
    (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(64))
    continuation.onTermination = { _ in onCancel(id) }
    register(id, continuation)
  }

  /// Ends the observation; iteration finishes after the buffered updates.
  public func cancel() { continuation.finish() }

  public func makeAsyncIterator() -> AsyncStream<Element>.Iterator { stream.makeAsyncIterator() }
}
