public import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// An advisory lock shared by processes (`flock` on a file created 0600):
/// many holders in shared mode, or one in exclusive mode. The kernel
/// releases it when a holder dies. Locks taken through two `FileLock`s in
/// one process exclude each other too (each opens the file anew).
///
/// Waiting never polls. The async methods never hold a cooperative thread:
/// a lock that is not free at once is waited for by a blocking `flock` on a
/// thread of its own, which resumes the waiting task. The synchronous ones
/// (`…Now`) block their caller: call them from a thread of their own
/// (``BlockingThread``), never from a task. Exclusive waiters are not starved
/// by a stream of shared holders: a turnstile file beside the lock
/// (`<name>.gate`) is held exclusively by whoever waits for the lock
/// exclusively, and passed (taken shared and let go) by every shared locker
/// on its way in, so shared lockers that come after an exclusive waiter
/// queue behind it. On a read-only file system shared holders hold
/// nothing (no writer can exist there); exclusive ones fail.
public struct FileLock: Sendable {
  /// The lock file.
  public let url: URL

  public init(url: URL) {
    self.url = url
  }

  /// The turnstile beside the lock file.
  var gateURL: URL { url.deletingLastPathComponent().appending(path: url.lastPathComponent + ".gate") }

  /// Runs `body` holding the lock exclusively.
  public func withExclusive<T>(_ body: () async throws -> T) async throws -> T {
    let fd = try await lockExclusive { fd, operation in try await Self.wait(fd, operation, self) }
    defer { close(fd) }
    return try await body()
  }

  /// Runs `body` holding the lock shared with other shared holders — or
  /// holding nothing when the lock's file system is read-only (a store
  /// baked into a container image): nothing can write there, so there is
  /// nothing to wait for.
  public func withShared<T>(_ body: () async throws -> T) async throws -> T {
    guard let gate = try openUnlessReadOnly(gateURL) else { return try await body() }
    do {
      try await Self.wait(gate, LOCK_SH, self)
      close(gate)  // passed: the turnstile is free for the next exclusive waiter
    } catch {
      close(gate)
      throw error
    }
    let fd = try open(url)
    defer { close(fd) }
    try await Self.wait(fd, LOCK_SH, self)
    return try await body()
  }

  /// Runs `body` holding the lock exclusively if no one holds it now, and
  /// answers whether it ran: for work that yields to a holder (a partial
  /// download being written is not stale).
  @discardableResult
  public func ifFree(_ body: () throws -> Void) throws -> Bool {
    let fd = try open(url)
    defer { close(fd) }
    guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return false }
    try body()
    return true
  }

  /// Runs `body` holding the lock exclusively, blocking the thread while it
  /// waits: for short critical sections in synchronous code (`deinit`).
  public func withExclusiveNow<T>(_ body: () throws -> T) throws -> T {
    let fd = try lockExclusiveNow()
    defer { close(fd) }
    return try body()
  }

  /// Runs `body` holding the lock shared, blocking the thread while it
  /// waits: for short reads in synchronous code (a pair of files written
  /// together under the exclusive lock).
  public func withSharedNow<T>(_ body: () throws -> T) throws -> T {
    guard let gate = try openUnlessReadOnly(gateURL) else { return try body() }
    do {
      try Self.block(gate, LOCK_SH, self)
      close(gate)
    } catch {
      close(gate)
      throw error
    }
    let fd = try open(url)
    defer { close(fd) }
    try Self.block(fd, LOCK_SH, self)
    return try body()
  }

  /// Takes the turnstile, then the lock, then lets the turnstile go: the
  /// open descriptor of the lock, held exclusively.
  private func lockExclusive(_ wait: (Int32, Int32) async throws -> Void) async throws -> Int32 {
    let gate = try open(gateURL)
    defer { close(gate) }  // closing lets the turnstile go
    try await wait(gate, LOCK_EX)
    let fd = try open(url)
    do { try await wait(fd, LOCK_EX) } catch {
      close(fd)
      throw error
    }
    return fd
  }

  private func lockExclusiveNow() throws -> Int32 {
    let gate = try open(gateURL)
    defer { close(gate) }
    try Self.block(gate, LOCK_EX, self)
    let fd = try open(url)
    do { try Self.block(fd, LOCK_EX, self) } catch {
      close(fd)
      throw error
    }
    return fd
  }

  /// Locks `fd`: at once when it is free, else by a blocking `flock` on a
  /// thread of its own while the task waits.
  private static func wait(_ fd: Int32, _ operation: Int32, _ lock: FileLock) async throws {
    if flock(fd, operation | LOCK_NB) == 0 { return }
    let failure = errno
    guard failure == EWOULDBLOCK || failure == EINTR else { throw lock.failure(failure) }
    // Cancellable: cancelling the task interrupts the blocked flock (a
    // signal to its thread, ``Waiter``), so Ctrl-C ends a parked wait too.
    let waiter = Waiter()
    let result = await withTaskCancellationHandler {
      await BlockingThread.run { () -> Int32 in
        waiter.enter()
        defer { waiter.leave() }
        while !waiter.isCancelled, flock(fd, operation) != 0 {
          let failure = errno  // read right after the call that set it
          guard failure == EINTR else { return failure }
        }
        return waiter.isCancelled ? ECANCELED : 0
      }
    } onCancel: {
      waiter.cancel()
    }
    guard result != ECANCELED else { throw CancellationError() }
    guard result == 0 else { throw lock.failure(result) }
  }

  /// Locks `fd`, blocking the calling thread.
  private static func block(_ fd: Int32, _ operation: Int32, _ lock: FileLock) throws {
    while flock(fd, operation) != 0 {
      let failure = errno
      guard failure == EINTR else { throw lock.failure(failure) }
    }
  }

  private func failure(_ code: Int32) -> SystemError {
    SystemError.fromErrno("Cannot lock '\(url.path)'", code: code)
  }

  /// ``open(_:)``, or nil when the file system is read-only (EROFS).
  private func openUnlessReadOnly(_ url: URL) throws -> Int32? {
    do { return try open(url) } catch let error as SystemError where error.errno == EROFS { return nil }
  }

  /// Opens (creating) a lock file without following a link, and only if it
  /// is a regular file of this user: a link or another user's file planted
  /// in the lock's folder would have odr create or lock what that user chose.
  private func open(_ url: URL) throws -> Int32 {
    let fd = Glibc.open(url.path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
      let code = errno
      if code == ELOOP {
        throw SystemError("The lock '\(url.path)' is a symbolic link, so odr refuses to use it. Remove it; odr then makes a new one.", errno: code)
      }
      throw SystemError.fromErrno("Cannot open the lock '\(url.path)'", code: code)
    }
    var info = stat()
    guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == getuid() else {
      close(fd)
      throw SystemError("The lock '\(url.path)' is not a file of this user, so odr refuses to use it. Remove it; odr then makes a new one.", errno: EPERM)
    }
    return fd
  }
}
