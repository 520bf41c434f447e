import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Standard input read to its end. A read error is an error, never an
/// early end: a key value or a request body cut short would otherwise be
/// stored or sent as if it were whole.
enum StandardInput {
  /// Everything on `input` (stdin), stopping once more than `limit` bytes are read
  /// (the caller then refuses the input as too large). `what` names the
  /// input in the error ("the value", "the body").
  static func readAll(_ input: FileDescriptor, limit: Int = .max, what: String) throws -> [UInt8] {
    var result: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    defer { for i in chunk.indices { chunk[i] = 0 } }
    while result.count <= limit {
      let count: Int
      do {
        count = try chunk.withUnsafeMutableBytes { try input.read(into: $0) }
      } catch Errno.resourceTemporarilyUnavailable {
        // A non-blocking stdin inherited from the parent: wait for data.
        var ready = pollfd(fd: input.rawValue, events: Int16(POLLIN), revents: 0)
        _ = poll(&ready, 1, -1)
        continue
      } catch {
        throw CommandFailure("Cannot read \(what) from standard input (\(error)); nothing was used. Give it on a pipe or from a file (< FILE).", code: 1)
      }
      if count == 0 { break }
      result.append(contentsOf: chunk[0..<count])
    }
    return result
  }
}
