import FoundationEssentials
import ODRBase
import NIOCore
import ODRCatalog
import SystemPackage

/// A file sent in 256 KiB buffers: the body of a streamed upload, so an
/// object of any size goes out with one buffer in memory. Exactly the
/// length the request's head announced is sent: a file that grew sends no
/// more (the rest would read as a request of its own), one that shrank
/// fails the upload.
enum FileChunks {
  static let chunkSize = 256 * 1024

  /// Calls `send` with each chunk of the first `length` bytes of `path`,
  /// awaiting each before the next is read. The file is closed however it
  /// ends.
  static func send(_ path: String, length: Int64, _ send: (ByteBuffer) async throws -> Void) async throws {
    let descriptor: SystemPackage.FileDescriptor
    do { descriptor = try SystemPackage.FileDescriptor.open(path, .readOnly, options: .closeOnExec) } catch {
      throw ResourceError(.io, "Cannot read '\(path)': \(error).")
    }
    // a read-only descriptor: closing it cannot lose data
    defer { dropping(.cleanup) { try descriptor.close() } }
    var buffer = ByteBufferAllocator().buffer(capacity: chunkSize)
    var left = length
    while left > 0 {
      buffer.clear()
      let want = Int(min(Int64(chunkSize), left))
      var failure: (any Error)?
      let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: want) { bytes in
        do { return try descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: bytes.prefix(want))) } catch {
          failure = error
          return 0
        }
      }
      if let failure { throw ResourceError(.io, "Cannot read '\(path)': \(failure).") }
      guard count > 0 else {
        throw ResourceError(.io, "'\(path)' ended \(left) bytes before the \(length) its upload announced; it changed while being sent.")
      }
      left -= Int64(count)
      try await send(buffer)
    }
  }
}
