import ArgumentParser

/// Catches an unknown subcommand before ArgumentParser does ("Unexpected
/// argument"), so `odr fecth` says what was meant and `odr help nope` is a
/// usage error (exit 2) instead of the root help.
enum CommandSuggestion {
  /// The message for `arguments` when they name no subcommand, else nil.
  static func problem(_ arguments: [String], commands: [String]) -> String? {
    guard let first = arguments.first, !first.hasPrefix("-") else { return nil }
    let name = first == "help" ? arguments.dropFirst().first : first
    guard let name, !name.hasPrefix("-"), !commands.contains(name) else { return nil }
    let shown = String(name.prefix(40))
    guard let guess = closest(to: name, among: commands) else {
      return "'\(shown)' is not an odr command. `odr --help` lists them."
    }
    return "'\(shown)' is not an odr command. Did you mean '\(guess)'? (`odr --help` lists them.)"
  }

  /// The command within two edits of `name`, or that it begins, if any.
  static func closest(to name: String, among commands: [String]) -> String? {
    let scored = commands.map { ($0, distance(name, $0)) }.filter { $0.1 <= 2 || $0.0.hasPrefix(name) && name.count >= 2 }
    return scored.min { $0.1 < $1.1 }?.0
  }

  /// Levenshtein distance (with adjacent transpositions counted once).
  static func distance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
    var rows = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
    for i in 0...a.count { rows[i][0] = i }
    for j in 0...b.count { rows[0][j] = j }
    for i in 1...a.count {
      for j in 1...b.count {
        let cost = a[i - 1] == b[j - 1] ? 0 : 1
        rows[i][j] = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
        if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { rows[i][j] = min(rows[i][j], rows[i - 2][j - 2] + 1) }
      }
    }
    return rows[a.count][b.count]
  }
}
