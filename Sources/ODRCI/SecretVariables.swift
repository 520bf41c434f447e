public import ODRKeys

/// The keys of a service as environment variables, in a stable order.
///
/// A key's variable is its `env` metadata, else its name in upper snake
/// case (`Weather` → `WEATHER`, `mapsKey` → `MAPS_KEY`, `OpenAIKey` →
/// `OPEN_AI_KEY`, `geo.v2-key` → `GEO_V2_KEY`). Two keys with one variable,
/// a name that is not `[A-Za-z_][A-Za-z0-9_]*`, or a variable that would
/// change how the command itself is found or started (`PATH`, `LD_*`,
/// `BASH_ENV`, …) are refused: a pack must not be able to take over the job.
public struct SecretVariables: Sendable {
  /// One variable: its name, the key it comes from, and the value.
  public struct Variable: Sendable, Equatable {
    public let name: String
    public let key: String
    public let value: String
  }

  /// The variables, sorted by name.
  public let variables: [Variable]

  /// The variables of `keys`; with `only`, just those keys (each must exist).
  public init(keys: [APIKey], only: [String]? = nil) throws {
    var selected = keys
    if let only {
      let byName = Dictionary(keys.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
      var seen = Set<String>()
      selected = []
      for name in only where seen.insert(name).inserted {
        guard let key = byName[name] else {
          let known = keys.map(\.name).joined(separator: ", ")
          throw CIError(.notFound, "No key '\(name)' to inject (keys: \(known.isEmpty ? "none" : known)). Check --only, or run `odr fetch` first.")
        }
        selected.append(key)
      }
    }
    guard !selected.isEmpty else {
      throw CIError(.notFound, "There are no keys to inject. Run `odr fetch APIKeys` first, or use --fetch TAG.")
    }
    var owners: [String: String] = [:]
    var variables: [Variable] = []
    for key in selected {
      let name = key.metadata.env ?? Self.upperSnakeCase(key.name)
      try Self.validate(variable: name, of: key.name)
      if let other = owners.updateValue(key.name, forKey: name) {
        throw CIError(.invalidVariable, "Keys '\(other)' and '\(key.name)' both map to the variable \(name). Give one of them another \"env\" in the APIKeys document, or pick one with --only.")
      }
      variables.append(Variable(name: name, key: key.name, value: key.value))
    }
    self.variables = variables.sorted { $0.name < $1.name }
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

  /// Variables a pack may not set: they decide which program runs, which
  /// libraries it loads or which code a shell runs first.
  static let reserved: Set<String> = [
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "PWD", "IFS", "ENV", "BASH_ENV", "PS4", "PROMPT_COMMAND",
    "GCONV_PATH", "LOCPATH", "NLSPATH", "HOSTALIASES", "TMPDIR", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME",
    "PERL5LIB", "PERL5OPT", "RUBYOPT", "RUBYLIB", "NODE_OPTIONS", "JAVA_TOOL_OPTIONS", "GIT_SSH_COMMAND", "GIT_EXEC_PATH",
  ]

  static func validate(variable name: String, of key: String) throws {
    let bytes = Array(name.utf8)
    guard let first = bytes.first, !(0x30...0x39).contains(first), bytes.count <= 255,
          bytes.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5a).contains($0) || (0x61...0x7a).contains($0) || $0 == UInt8(ascii: "_") })
    else {
      throw CIError(.invalidVariable, "Key '\(key)': '\(String(name.prefix(64)))' is not a valid environment variable name ([A-Za-z_][A-Za-z0-9_]*). Set \"env\" for it in the APIKeys document.")
    }
    let upper = name.uppercased()
    if reserved.contains(upper) || upper.hasPrefix("LD_") || upper.hasPrefix("BASH_FUNC_") {
      throw CIError(.invalidVariable, "Key '\(key)': the variable \(name) changes how programs are found or started, so odr does not set it from a pack. Set another \"env\" for it in the APIKeys document.")
    }
  }
}
