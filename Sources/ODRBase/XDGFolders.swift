public import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The folders of the XDG base directory specification odr uses, as an
/// environment sets them.
public struct XDGFolders: Sendable, Equatable {
  /// `$XDG_STATE_HOME` when absolute, else `~/.local/state`: state that must
  /// outlive the cache (trust, import locks).
  public let stateHome: URL
  /// `$XDG_CACHE_HOME` when absolute, else `~/.cache`.
  public let cacheHome: URL

  /// The folders `environment` names (`HOME`, `XDG_STATE_HOME`, `XDG_CACHE_HOME`).
  /// With no absolute `HOME`, the home folder of this user's passwd entry;
  /// with none either, ``noHome``, where nothing can be created, so that
  /// odr fails rather than keep its state in a folder others can write.
  public init(environment: [String: String]) {
    let home = environment["HOME"].flatMap { $0.hasPrefix("/") ? URL(filePath: $0) : nil } ?? Self.passwdHome() ?? Self.noHome
    func folder(_ variable: String, else relative: String) -> URL {
      if let value = environment[variable], value.hasPrefix("/") { return URL(filePath: value) }
      return home.appending(path: relative)
    }
    stateHome = folder("XDG_STATE_HOME", else: ".local/state")
    cacheHome = folder("XDG_CACHE_HOME", else: ".cache")
  }

  /// The home of a user with neither `HOME` nor a passwd entry: under
  /// `/dev/null`, so every folder odr would make there fails to be made,
  /// even as root, and the message names it.
  public static let noHome = URL(filePath: "/dev/null/no-home (set HOME or XDG_STATE_HOME and XDG_CACHE_HOME)")

  /// The home folder of this user's passwd entry, if it names an absolute one.
  static func passwdHome() -> URL? {
    var entry = passwd(), result: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 4096)
    guard getpwuid_r(getuid(), &entry, &buffer, buffer.count, &result) == 0, result != nil, let directory = entry.pw_dir else { return nil }
    let path = String(cString: directory)
    return path.hasPrefix("/") ? URL(filePath: path) : nil
  }

  /// The folders of this process's environment: the default of the
  /// libraries' APIs, for apps. `odr` passes its context's folders.
  public static var ofProcess: XDGFolders { XDGFolders(environment: ProcessInfo.processInfo.environment) }
}
