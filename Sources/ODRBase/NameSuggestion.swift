/// "Did you mean …?": the known name closest to a misspelt one (commands,
/// odr.json keys).
package enum NameSuggestion {
  /// The name within two edits of `name`, or that it begins, if any.
  package static func closest(to name: String, among commands: [String]) -> String? {
    let scored = commands.map { ($0, distance(name, $0)) }.filter { $0.1 <= 2 || $0.0.hasPrefix(name) && name.count >= 2 }
    // Among equals, a name the typed one begins wins (`stat`: status, not set).
    return scored.min { ($0.1, $0.0.hasPrefix(name) ? 0 : 1) < ($1.1, $1.0.hasPrefix(name) ? 0 : 1) }?.0
  }

  /// Levenshtein distance (with adjacent transpositions counted once).
  package static func distance(_ a: String, _ b: String) -> Int {
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
