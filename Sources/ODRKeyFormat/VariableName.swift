/// The environment variable a key is injected as (`odr exec`, `odr env`),
/// and the rule that keeps a pack from taking over the job that uses it.
///
/// A key's variable is its `env` metadata, else its name in upper snake
/// case. The rule holds by construction rather than by a deny list of
/// single names: a variable must be
///
/// - upper case: `[A-Z][A-Z0-9]*(_[A-Z0-9]+)*`, at most 64 characters (so
///   no `http_proxy`, `npm_config_*` or other lower-case settings), and
/// - outside the families that programs read for behaviour: anything that
///   starts with a tool or runtime's prefix (`LD_`, `BASH`, `GIT_`, `JAVA`,
///   `PYTHON`, `NODE_`, `ODR_`, …), ends with a behaviour suffix (`PATH`,
///   `PROXY`, `OPTIONS`, `OPTS`, `FLAGS`, `HOME`, `CONFIG`, `DIR`, `LIB`,
///   `PRELOAD`, `ENV`, `SHELL`, `EDITOR`, `PAGER`, `ASKPASS`, …), or is a
///   name the shell, libc or CI runners act on (`IFS`, `PS4`, `TZ`,
///   `GITHUB_OUTPUT`, …).
///
/// `odr pack` and `odr fetch` refuse a document whose variables break it;
/// `odr exec` and `odr env` skip (with a warning) items that do.
public enum VariableName {
  /// True for a portable environment variable name, `[A-Za-z_][A-Za-z0-9_]*`
  /// (POSIX): what a dotenv file or a key's `env` may name at all, before
  /// ``refusal(_:)`` says whether a pack may set it.
  public static func isPortable(_ name: String) -> Bool {
    guard let first = name.utf8.first, !(0x30...0x39).contains(first) else { return false }
    return name.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5a).contains($0) || (0x61...0x7a).contains($0) || $0 == UInt8(ascii: "_") }
  }

  /// `name` in upper snake case: a '_' between a lower-case letter or digit
  /// and an upper-case one, and before the last capital of an acronym that
  /// starts a word; '.' and '-' become '_'.
  public static func upperSnakeCase(_ name: String) -> String {
    let chars = Array(name)
    var result = ""
    for (i, c) in chars.enumerated() {
      if c == "." || c == "-" || c == "_" {
        if !result.hasSuffix("_") { result.append("_") }
        continue
      }
      if c.isUppercase, i > 0, !result.hasSuffix("_") {
        let previous = chars[i - 1]
        let next = i + 1 < chars.count ? chars[i + 1] : nil
        if previous.isLowercase || previous.isNumber || (previous.isUppercase && next?.isLowercase == true) {
          result.append("_")
        }
      }
      result.append(contentsOf: c.uppercased())
    }
    return result
  }

  /// The variable of `key`: its `env` metadata, else its name in upper snake case.
  public static func of(_ key: APIKey) -> String {
    key.metadata.env ?? upperSnakeCase(key.name)
  }

  /// Why `name` may not be set from a pack, or nil when it may.
  public static func refusal(_ name: String) -> String? {
    let bytes = Array(name.utf8)
    let isUpper = { (b: UInt8) in (0x41...0x5a).contains(b) }
    let isDigit = { (b: UInt8) in (0x30...0x39).contains(b) }
    guard let first = bytes.first, isUpper(first), bytes.count <= 64, bytes.last != UInt8(ascii: "_"),
          !name.contains("__"), bytes.allSatisfy({ isUpper($0) || isDigit($0) || $0 == UInt8(ascii: "_") }) else {
      return "'\(String(name.prefix(64)))' is not an upper-case variable name ([A-Z][A-Z0-9]*(_[A-Z0-9]+)*, at most 64 characters)"
    }
    if exact.contains(name) || prefixes.contains(where: name.hasPrefix) || suffixes.contains(where: name.hasSuffix) {
      return "\(name) is one of the variables programs read to decide what they run, load, trust or print"
    }
    return nil
  }

  /// True when `name` (in any case) falls in the families programs read
  /// for behaviour, whatever its case: what a secret from a pack may not be
  /// injected as, even where a variable's name is the user's choice.
  public static func readsForBehaviour(_ name: String) -> Bool {
    let upper = name.uppercased()
    return exact.contains(upper) || prefixes.contains(where: upper.hasPrefix) || suffixes.contains(where: upper.hasSuffix)
  }

  /// Tool and runtime families, by prefix.
  static let prefixes = [
    "LD_", "DYLD_", "BASH", "SHELL", "ZSH", "KSH", "GIT_", "SSH_", "GPG", "GNUPG", "JAVA", "JDK_", "MAVEN", "GRADLE",
    "PERL", "PYTHON", "PIP_", "RUBY", "GEM_", "BUNDLE_", "NODE_", "NPM_", "YARN_", "DENO_", "CARGO_", "RUST", "GO_",
    "LC_", "LANG", "XDG_", "DBUS_", "WAYLAND_", "SSL_", "OPENSSL_", "CURL_", "GLIBC", "MALLOC_", "GCONV", "DOCKER_",
    "KUBE", "ODR_", "SUDO_", "RUNNER_", "LESS", "HIST", "PS", "GCC_", "CC_", "CXX", "CPP", "PKG_CONFIG", "QT_", "GTK_",
    "GDK_", "GIO_", "GSETTINGS", "NIX_", "DOTNET_", "CLR_", "PHP", "LUA_", "TCL", "TK_",
  ]
  /// Behaviour settings, by suffix.
  static let suffixes = [
    "PATH", "PROXY", "OPTIONS", "OPTS", "FLAGS", "HOME", "CONFIG", "DIR", "LIB", "PRELOAD", "STARTUP", "ENV", "SHELL",
    "EDITOR", "PAGER", "ASKPASS", "BUNDLE", "CERT", "CERTS", "INCLUDE", "PLUGINS", "HOOK", "HOOKS",
  ]
  /// Single names the shell, libc, terminals and CI runners act on.
  static let exact: Set<String> = [
    "IFS", "ENV", "CDPATH", "PROMPT_COMMAND", "HOME", "USER", "LOGNAME", "PWD", "OLDPWD", "TMPDIR", "TMP", "TEMP",
    "MAIL", "SHLVL", "TZ", "TERM", "COLUMNS", "LINES", "DISPLAY", "EDITOR", "VISUAL", "PAGER", "BROWSER",
    "HOSTALIASES", "RES_OPTIONS", "LOCALDOMAIN", "LOCPATH", "NLSPATH", "POSIXLY_CORRECT", "CI", "GOFLAGS", "GOROOT",
    "GOPROXY", "GONOSUMDB", "GONOSUMCHECK", "GOPRIVATE", "GOTOOLCHAIN", "GOBIN", "GOCACHE", "GOMODCACHE", "GOOS", "GOARCH",
    "CGO_ENABLED", "CC", "LDFLAGS", "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE",
    "GITHUB_ACTIONS", "GITLAB_CI", "MAKEFLAGS", "MAKELEVEL", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "SOURCE_DATE_EPOCH",
  ]
}
