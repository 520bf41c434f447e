import ODRBase
package import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// One JSON file of odr's state, read and written whole: trust state,
/// location bindings, the catalog index. It tells a missing file (nil) from
/// an unreadable one (an error naming the file and how to reset it): state
/// fails closed, so a damaged file is never read as "first use" and is
/// never overwritten, which would erase the evidence (docs/trust.md).
/// Updates run under an exclusive `flock` beside the file and replace it
/// atomically.
package struct StateFile<Value: Codable>: Sendable {
  package let url: URL
  /// What the file is, for messages ("the trust state of com.example.demo").
  package let what: String
  /// How the user starts over, after "to start over, " (run `odr trust
  /// reset com.example.demo`).
  package let reset: String
  /// The `flock` file its changes are made under (default: beside it, `.lock` added).
  package let lock: URL
  /// Whether a write survives a power loss (fsync of the file and its
  /// folder). False for state that a crash of the machine makes moot:
  /// leases (every holder is gone after a reboot) and last uses (purge
  /// order only). Either way a killed process leaves the old value or the
  /// new one, never a torn file.
  package let durable: Bool

  package init(url: URL, what: String, reset: String, lock: URL? = nil, durable: Bool = true) {
    self.url = url
    self.what = what
    self.reset = reset
    self.lock = lock ?? url.deletingLastPathComponent().appending(path: url.lastPathComponent + ".lock")
    self.durable = durable
  }

  /// The value, or nil when there is no file.
  package func read() throws -> Value? {
    var data = Data()
    // The file may appear between a failed read and the check that it is
    // missing (another process writing it for the first time): read again.
    for attempt in 1...3 {
      do {
        data = try Data(contentsOf: url)
        break
      } catch {
        if FileIO.kind(of: url) == .missing { return nil }
        if attempt == 3 { throw unreadable("cannot be read") }
      }
    }
    do { return try JSONReader.decode(Value.self, from: data) } catch let error as ResourceError {
      throw unreadable(error.message)
    } catch let error as JSONReader.Failure where !data.isEmpty {
      throw unreadable("is not JSON odr reads (\(error.message))")
    } catch {
      throw unreadable(data.isEmpty ? "is empty" : "is not what odr writes there (\(DecodingErrorDescription(error)))")
    }
  }

  /// Reads, changes and writes the value under the file's lock; returns
  /// what `body` returns. Nothing is written when `body` throws or leaves
  /// the value as it was.
  package func update<T>(_ body: (inout Value?) async throws -> T) async throws -> T {
    try FileIO.makePrivateDirectory(url.deletingLastPathComponent(), for: "the folder of \(what)")
    return try await FileLock(url: lock).withExclusive {
      var value = try read()
      let before: Data? = if let value { try Self.encode(value) } else { nil }
      let result = try await body(&value)
      if let value, case let after = try Self.encode(value), after != before { try FileIO.atomicWrite(after, to: url, mode: 0o600, durable: durable) }
      return result
    }
  }

  /// Replaces the file atomically; the caller holds ``lock``.
  package func write(_ value: Value) throws {
    try FileIO.atomicWrite(try Self.encode(value), to: url, mode: 0o600, durable: durable)
  }

  /// The bytes odr writes for `value`: one encoding for a value, so equal
  /// values compare equal.
  package static func encode(_ value: Value) throws -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    return try encoder.encode(value)
  }

  /// The error for a file that is there but cannot be used.
  package func unreadable(_ why: String) -> ResourceError {
    ResourceError(.unreadableState, "\(url.path), \(what), \(why). odr does not guess: it refuses rather than start over as if nothing had been seen. Look at the file (a later odr's format? a damaged disk? tampering?); to start over, \(reset).")
  }
}
