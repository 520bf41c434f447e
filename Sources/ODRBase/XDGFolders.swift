public import FoundationEssentials

/// The folders of the XDG base directory specification odr uses, as an
/// environment sets them.
public struct XDGFolders: Sendable, Equatable {
  /// `$XDG_STATE_HOME` when absolute, else `~/.local/state`: state that must
  /// outlive the cache (trust, import locks).
  public let stateHome: URL
  /// `$XDG_CACHE_HOME` when absolute, else `~/.cache`.
  public let cacheHome: URL

  /// The folders `environment` names (`HOME`, `XDG_STATE_HOME`, `XDG_CACHE_HOME`).
  public init(environment: [String: String]) {
    func folder(_ variable: String, else relative: String) -> URL {
      if let value = environment[variable], value.hasPrefix("/") { return URL(filePath: value) }
      return URL(filePath: environment["HOME"] ?? "/tmp").appending(path: relative)
    }
    stateHome = folder("XDG_STATE_HOME", else: ".local/state")
    cacheHome = folder("XDG_CACHE_HOME", else: ".cache")
  }

  /// The folders of this process's environment: the default of the
  /// libraries' APIs, for apps. `odr` passes its context's folders.
  public static var ofProcess: XDGFolders { XDGFolders(environment: ProcessInfo.processInfo.environment) }
}
