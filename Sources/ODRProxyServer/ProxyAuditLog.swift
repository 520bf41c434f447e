#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOPosix
import ODRProxy
import Synchronization

/// Where the proxy's audit lines go: odr's stderr, or a file of the
/// user's (`--proxy-log FILE`, created 0600, appended to; a device or a
/// pipe as it is). One
/// ``ProxyAuditRecord`` per line, written whole.
///
/// Lines are written off the event loops, together: a request's line
/// waits at most ``interval`` (a stderr whose reader is slow, or paused,
/// never holds up the proxy, and a reader is woken once per batch, not
/// once per request). ``flush()`` writes what is left when the run ends.
/// Lines beyond ``pendingLimit`` while the reader does not read are
/// counted, and the count is written in their place.
public final class ProxyAuditLog: Sendable {
  static let interval = TimeAmount.milliseconds(10)
  static let pendingLimit = 4 << 20

  private let descriptor: Int32
  private let owned: Bool
  private struct Pending {
    var bytes: [UInt8] = []
    var scheduled = false
    var dropped = 0
  }
  private let pending = Mutex(Pending())
  /// Held while a batch is taken and written: batches go out in order.
  private let writing = Mutex(())
  /// The one thread that writes (blocked there, a write holds up nothing else).
  private let writer = NIOThreadPool(numberOfThreads: 1)

  /// Lines to an open descriptor odr keeps (stderr).
  public init(descriptor: Int32) {
    self.descriptor = descriptor
    owned = false
    writer.start()
  }

  /// Lines appended to `path`, created 0600 if it is not there.
  public init(path: String) throws(ProxyServerError) {
    let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard fd >= 0 else { throw ProxyServerError("cannot open the proxy log \(path): \(String(cString: strerror(errno))).") }
    // An existing log file of the user's is made private too; not a device
    // or a pipe (`--proxy-log /dev/null` as root once made /dev/null 0600).
    var status = stat()
    if fstat(fd, &status) == 0 && status.st_mode & S_IFMT == S_IFREG { fchmod(fd, 0o600) }
    descriptor = fd
    owned = true
    writer.start()
  }

  deinit {
    flush()
    writer.shutdownGracefully { _ in }  // not waited for: this may run on the writer's own thread
    if owned { close(descriptor) }
  }

  func write(_ record: ProxyAuditRecord) {
    let schedule = pending.withLock { state -> Bool in
      if state.bytes.count < Self.pendingLimit { state.bytes += record.line.utf8 } else { state.dropped += 1 }
      defer { state.scheduled = true }
      return !state.scheduled
    }
    guard schedule else { return }
    MultiThreadedEventLoopGroup.singleton.next().scheduleTask(in: Self.interval) { [self] in
      writer.submit { [self] _ in flush() }
    }
  }

  /// Writes every line not yet written, blocking until it is out.
  public func flush() {
    writing.withLock { _ in
      let bytes = pending.withLock { state in
        defer { state = Pending() }
        return state.bytes + (state.dropped == 0 ? [] : Array(#"{"note": "\#(state.dropped) audit lines dropped: the log's reader was not reading"}"#.utf8) + [0x0a])
      }
      var offset = 0
      while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        if written < 0 && errno == EINTR { continue }
        if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
          // Made non-blocking by whoever shares it (the command shares
          // odr's stderr): wait until it takes more, rather than drop lines.
          var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
          _ = poll(&ready, 1, -1)
          continue
        }
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
