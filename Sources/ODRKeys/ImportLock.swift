public import FoundationEssentials
import ODRResources

/// The cross-process lock of one service's imports:
/// `${XDG_STATE_HOME:-~/.local/state}/odr/<service>/import.lock`. `odr fetch`
/// holds it exclusively for a whole import (and any roll-back); readers of
/// the keys hold it shared, so they never see half an import.
public struct ImportLock: Sendable {
  let lock: FileLock

  /// The lock of `service` under `stateHome` (default: the XDG state folder).
  public init(service: String, stateHome: URL? = nil) {
    let folder = (stateHome ?? XDGFolders.stateHome).appending(path: "odr").appending(path: service)
    lock = FileLock(url: folder.appending(path: "import.lock"))
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
      throw ResourceError(.io, "Cannot create the folder '\(folder.path)' for odr's import lock. Check that $XDG_STATE_HOME (or ~/.local/state) is writable.")
    }
  }
}
