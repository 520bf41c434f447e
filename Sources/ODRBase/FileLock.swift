public import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// An advisory lock shared by processes (`flock` on a file created 0600):
/// many holders in shared mode, or one in exclusive mode. Waiting polls, so
/// it never blocks a cooperative thread; the kernel releases the lock when
/// a holder dies. Locks taken through two `FileLock`s in one process
/// exclude each other too (each opens the file anew).
public struct FileLock: Sendable {
  /// The lock file.
  public let url: URL

  public init(url: URL) {
    self.url = url
  }

  /// Runs `body` holding the lock exclusively.
  public func withExclusive<T>(_ body: () async throws -> T) async throws -> T {
    try await withLock(shared: false, body)
  }

  /// Runs `body` holding the lock shared with other shared holders.
  public func withShared<T>(_ body: () async throws -> T) async throws -> T {
    try await withLock(shared: true, body)
  }

  /// Runs `body` holding the lock exclusively, blocking the thread while it
  /// waits: for short critical sections in synchronous code.
  public func withExclusiveNow<T>(_ body: () throws -> T) throws -> T {
    let fd = try open()
    defer { close(fd) }
    while flock(fd, LOCK_EX) != 0 {
      guard errno == EINTR else { throw SystemError.fromErrno("Cannot lock '\(url.path)'") }
    }
    return try body()
  }

  private func withLock<T>(shared: Bool, _ body: () async throws -> T) async throws -> T {
    let fd = try open()
    defer { close(fd) }
    // Poll rather than block: a blocked flock would hold one of the few
    // cooperative threads, and the holder may need it to finish.
    while flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0 {
      guard errno == EWOULDBLOCK || errno == EINTR else { throw SystemError.fromErrno("Cannot lock '\(url.path)'") }
      try await Task.sleep(for: .milliseconds(5))
    }
    return try await body()
  }

  private func open() throws -> Int32 {
    let fd = Glibc.open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw SystemError.fromErrno("Cannot open the lock '\(url.path)'") }
    return fd
  }
}
