import ODRBase
public import ODRKeyFormat

/// The keys of a service as environment variables, in a stable order.
///
/// A key's variable is its `env` metadata, else its name in upper snake
/// case (`Weather` → `WEATHER`, `mapsKey` → `MAPS_KEY`, `OpenAIKey` →
/// `OPEN_AI_KEY`, `geo.v2-key` → `GEO_V2_KEY`); `VariableName` says which
/// variables a pack may not set. Such an item in the keyring (written by
/// another tool, or a name with a space) is skipped with a warning, so one
/// foreign item does not block the rest; asked for by `--only`, it is an
/// error. Two keys with one variable are refused.
public struct SecretVariables: Sendable {
  /// One variable: its name, the key it comes from, and the value.
  public struct Variable: Sendable, Equatable {
    public let name: String
    public let key: String
    public let value: String
  }

  /// The variables, sorted by name.
  public let variables: [Variable]
  /// One warning per key left out, naming it (never its value).
  public let skipped: [String]

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
          throw ExecError(.notFound, "No key '\(name)' to inject (keys: \(known.isEmpty ? "none" : known)). Check --only, or run `odr fetch` first.")
        }
        selected.append(key)
      }
    }
    var owners: [String: String] = [:]
    var variables: [Variable] = []
    var skipped: [String] = []
    for key in selected {
      let name = VariableName.of(key)
      if let refusal = VariableName.refusal(name) {
        let shown = Self.shown(key.name)
        guard only == nil else {
          throw ExecError(.invalidVariable, "Key \(shown): \(refusal), so odr does not set it. Give it another \"env\" in the APIKeys document.")
        }
        skipped.append("skipped key \(shown): \(refusal).")
        continue
      }
      if let other = owners.updateValue(key.name, forKey: name) {
        throw ExecError(.invalidVariable, "Keys '\(other)' and '\(key.name)' both map to the variable \(name). Give one of them another \"env\" in the APIKeys document, or pick one with --only.")
      }
      variables.append(Variable(name: name, key: key.name, value: key.value))
    }
    guard !variables.isEmpty else {
      throw ExecError(.notFound, "There are no keys to inject\(skipped.isEmpty ? "" : " (\(skipped.count) skipped: \(skipped.joined(separator: " ")))"). Run `odr fetch APIKeys` first, or use --fetch TAG.")
    }
    self.variables = variables.sorted { $0.name < $1.name }
    self.skipped = skipped
  }

  /// `name` in upper snake case (ODRKeys' `VariableName.upperSnakeCase(_:)`).
  public static func upperSnakeCase(_ name: String) -> String { VariableName.upperSnakeCase(name) }

  /// A key name from the keyring for a message: quoted, control characters
  /// escaped, shortened.
  static func shown(_ name: String) -> String {
    let escaped = name.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? $0.escaped(asASCII: true) : String($0) }.joined()
    return "'" + (escaped.count > 64 ? String(escaped.prefix(64)) + "…" : escaped) + "'"
  }
}
