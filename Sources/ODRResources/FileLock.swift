public import FoundationEssentials

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
    try await FileIO.withLock(url, shared: false, body)
  }

  /// Runs `body` holding the lock shared with other shared holders.
  public func withShared<T>(_ body: () async throws -> T) async throws -> T {
    try await FileIO.withLock(url, shared: true, body)
  }
}

/// The folders of the XDG base directory specification odr uses.
public enum XDGFolders {
  /// `$XDG_STATE_HOME` when absolute, else `~/.local/state`: state that must
  /// outlive the cache (trust, import locks).
  public static var stateHome: URL { folder("XDG_STATE_HOME", else: ".local/state") }

  /// `$XDG_CACHE_HOME` when absolute, else `~/.cache`.
  public static var cacheHome: URL { folder("XDG_CACHE_HOME", else: ".cache") }

  private static func folder(_ variable: String, else relative: String) -> URL {
    let environment = ProcessInfo.processInfo.environment
    if let value = environment[variable], value.hasPrefix("/") { return URL(filePath: value) }
    return URL(filePath: environment["HOME"] ?? "/tmp").appending(path: relative)
  }
}
