#if canImport(Glibc)
import Glibc
#endif
import ODRProxy
import Synchronization

/// Where the proxy's audit lines go: odr's stderr, or a file of the
/// user's (`--proxy-log FILE`, created 0600, appended to). One
/// ``ProxyAuditRecord`` per line, written whole.
public final class ProxyAuditLog: Sendable {
  private let descriptor: Int32
  private let owned: Bool
  private let lock = Mutex(())

  /// Lines to an open descriptor odr keeps (stderr).
  public init(descriptor: Int32) {
    self.descriptor = descriptor
    owned = false
  }

  /// Lines appended to `path`, created 0600 if it is not there.
  public init(path: String) throws(ProxyServerError) {
    let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard fd >= 0 else { throw ProxyServerError("cannot open the proxy log \(path): \(String(cString: strerror(errno))).") }
    fchmod(fd, 0o600)
    descriptor = fd
    owned = true
  }

  deinit {
    if owned { close(descriptor) }
  }

  func write(_ record: ProxyAuditRecord) {
    let bytes = Array(record.line.utf8)
    lock.withLock { _ in
      var offset = 0
      while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { return }
        offset += written
      }
    }
  }
}

/// A proxy failure with a message for the user.
public struct ProxyServerError: Error, Sendable, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}
