public import FoundationEssentials
import ODRBase
public import ODRKeyring
#if canImport(Glibc)
import Glibc
#endif

/// The cross-process lock of one service's imports and its pending mark,
/// in `${XDG_STATE_HOME:-~/.local/state}/odr/<service>/`.
///
/// `odr fetch` holds `import.lock` exclusively for a whole import (and any
/// roll-back); a reader of every key holds it shared for its one search.
/// `import.pending` exists from just before the import writes
/// its journal until just after it removes it: a reader of one key checks
/// for it (a `stat`, no keyring round trip) to know whether the journal
/// must be read too. Neither file holds anything secret.
public struct ImportLock: Sendable {
  let lock: FileLock

  /// The lock of `service` under `stateHome` (default: the XDG state folder).
  public init(service: String, stateHome: URL? = nil) {
    let folder = (stateHome ?? XDGFolders.ofProcess.stateHome).appending(path: "odr").appending(path: service)
    lock = FileLock(url: folder.appending(path: "import.lock"))
  }

  /// The lock of the imports into `store`.
  public init(for store: some SecretStore) {
    self.init(service: store.service, stateHome: store.stateHome)
  }

  private var pendingPath: String { lock.url.deletingLastPathComponent().appending(path: "import.pending").path }

  /// True while an import may have a journal in the keyring (one is
  /// running, or one was cut short and not yet repaired).
  public var isPending: Bool { access(pendingPath, F_OK) == 0 }

  /// Marks an import as under way; call before writing its journal.
  func markPending() throws {
    let fd = open(pendingPath, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw SystemError.fromErrno("Cannot create '\(pendingPath)'") }
    close(fd)
  }

  /// Clears the mark; call after the journal is gone.
  func clearPending() {
    unlink(pendingPath)
  }

  func withExclusive<T>(_ body: () async throws -> T) async throws -> T {
    try makeFolder()
    return try await lock.withExclusive(body)
  }

  func withShared<T>(_ body: () async throws -> T) async throws -> T {
    try makeFolder()
    return try await lock.withShared(body)
  }

  private func makeFolder() throws {
    let folder = lock.url.deletingLastPathComponent()
    do {
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    } catch {
      // The errno the failure carries, not the global one (later calls change it).
      let code = ((error as? CocoaError)?.underlying as? POSIXError)?.code.rawValue ?? EIO
      throw SystemError("Cannot create the folder '\(folder.path)' for odr's import lock (\(String(cString: strerror(code)))). Check that $XDG_STATE_HOME (or ~/.local/state) is writable.", errno: code)
    }
  }
}
