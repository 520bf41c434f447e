public import FoundationEssentials

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
