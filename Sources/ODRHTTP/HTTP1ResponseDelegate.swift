public import NIOCore
public import NIOHTTP1

/// Receives one answer of ``HTTP1Client``, each callback on the event loop
/// the request was sent with. The futures the first two return are the
/// back-pressure: nothing more is read from the server until they complete.
public protocol HTTP1ResponseDelegate: AnyObject, Sendable {
  func didReceiveHead(_ head: HTTPResponseHead) -> EventLoopFuture<Void>
  func didReceiveBodyPart(_ buffer: ByteBuffer) -> EventLoopFuture<Void>
  /// The answer is complete.
  func didFinish()
  /// The request failed: before its answer, or while it came. Called at
  /// most once, and never after ``didFinish()``.
  func didFail(_ error: any Error)
}
