public import FoundationEssentials
import ODRBase
public import ODRKeyring
#if canImport(Glibc)
import Glibc
#endif

/// The cross-process lock of one service's imports, in
/// `${XDG_STATE_HOME:-~/.local/state}/odr/<service>/import.lock`.
///
/// `odr fetch` holds it exclusively for a whole import (and any roll-back);
/// a reader of every key holds it shared for its one search. A reader of
/// one key takes no lock: it looks the key up, then the import journal,
/// in the keyring itself, so readers agree whatever state folder each has
/// (the lock only orders processes that share one). The file holds nothing.
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
    do { try PrivateFolder.make(folder) } catch {
      throw SystemError("\(error.message) (the folder of odr's import lock; check that $XDG_STATE_HOME, or ~/.local/state, is yours and writable)", errno: error.errno)
    }
  }
}
