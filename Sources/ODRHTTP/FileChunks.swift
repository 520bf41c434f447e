import FoundationEssentials
import ODRBase
import NIOCore
import ODRCatalog
import SystemPackage

/// A file read in 256 KiB buffers as an async sequence: the body of a
/// streamed upload, so an object of any size is sent with a few buffers in
/// memory. The file is opened on the first read and closed at its end.
/// The iterator reuses its buffer: a new one is allocated (copy on write)
/// only while the previous chunk is still being sent.
struct FileChunks: AsyncSequence, Sendable {
  typealias Element = ByteBuffer
  let path: String
  static let chunkSize = 256 * 1024

  struct AsyncIterator: AsyncIteratorProtocol {
    let path: String
    var descriptor: SystemPackage.FileDescriptor?
    var finished = false
    var buffer = ByteBufferAllocator().buffer(capacity: FileChunks.chunkSize)

    mutating func next() async throws -> ByteBuffer? {
      guard !finished else { return nil }
      if descriptor == nil {
        do { descriptor = try SystemPackage.FileDescriptor.open(path, .readOnly, options: .closeOnExec) } catch {
          throw ResourceError(.io, "Cannot read '\(path)': \(error).")
        }
      }
      guard let descriptor else { return nil }
      buffer.clear()
      var failure: (any Error)?
      let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: FileChunks.chunkSize) { bytes in
        do { return try descriptor.read(into: bytes) } catch {
          failure = error
          return 0
        }
      }
      if let failure {
        // a read-only descriptor: closing it cannot lose data
        dropping(.cleanup) { try descriptor.close() }
        throw ResourceError(.io, "Cannot read '\(path)': \(failure).")
      }
      if count == 0 {
        finished = true
        // a read-only descriptor: closing it cannot lose data
        dropping(.cleanup) { try descriptor.close() }
        return nil
      }
      return buffer
    }
  }

  func makeAsyncIterator() -> AsyncIterator { AsyncIterator(path: path) }
}
