#if canImport(Glibc)
import ODRExec
import Glibc
#endif

/// Replaces `odr` with its helper, `odr-http` (same arguments, same
/// environment), for the commands that need full Foundation, which `odr`
/// does not load: `odr http` (URLSession, so Foundation networking and
/// libcurl) and `odr url` (it must answer what `URL(string:)` answers in an
/// app that imports Foundation, whose host parsing — IDNA — FoundationEssentials
/// alone lacks). Called before any parsing; nothing has been written or
/// printed yet, so the hand-off is invisible.
enum HTTPHandoff {
  /// The commands the helper runs.
  static let commands: Set<String> = ["http", "url"]

  /// Where the helper is: `libexec/odr/` beside `bin/` (installed, the
  /// release archive, the Debian package), else next to `odr` (a build folder).
  static func helperCandidates(executable: String) -> [String] {
    let folder = executable.lastIndex(of: "/").map { String(executable[..<$0]) } ?? "."
    let prefix = folder.lastIndex(of: "/").map { String(folder[..<$0]) } ?? ".."
    return ["\(prefix)/libexec/odr/odr-http", "\(folder)/odr-http"]
  }

  static func exec(_ output: Output) -> Never {
    let candidates = helperCandidates(executable: CommandLineTool.executablePath)
    let helper = candidates.first { access($0, X_OK) == 0 } ?? candidates[0]
    var arguments: [UnsafeMutablePointer<CChar>?] = [strdup(helper)] + CommandLine.arguments.dropFirst().map { strdup($0) } + [nil]
    CoreDumps.restoreForChild()  // the helper disables them again, from the user's limit
    execv(helper, &arguments)
    output.error("odr \(CommandLine.arguments.dropFirst().first ?? "http") needs its helper, \(candidates.joined(separator: " or ")): \(String(cString: strerror(errno))). Reinstall odr (the release archive or the Debian package carry it), or use curl.")
    exit(1)
  }
}
