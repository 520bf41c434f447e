/// Rows for a person or for a script, from one place: on a terminal,
/// aligned columns under a header; piped, tab-separated fields and no header
/// (what `cut -f`, `awk -F'\t'` and `while IFS=$'\t' read` expect).
/// Cells hold names from catalogs, keyrings and other processes (a pin
/// holder's command name), so control characters are escaped as in error
/// lines: no terminal escape sequence, no tab or line break forging a cell
/// or a row.
struct TextTable {
  let header: [String]
  var rows: [[String]] = []

  /// Writes the table to `output`'s stdout, for a terminal or a pipe.
  /// `notes` (a title, remarks) come first on a terminal; piped, they go
  /// to stderr, so stdout holds nothing but rows.
  func write(to output: Output, notes: [String] = []) {
    let noteText = notes.map { $0 + "\n" }.joined()
    if output.stdoutIsTerminal {
      output.write(noteText + rendered(forTerminal: true))
    } else {
      output.prompt(noteText)
      output.write(rendered(forTerminal: false))
    }
  }

  /// The table as text for a terminal or a pipe.
  func rendered(forTerminal terminal: Bool) -> String {
    let rows = rows.map { $0.map { Output.oneLine($0) } }
    guard terminal else { return rows.map { $0.joined(separator: "\t") + "\n" }.joined() }
    let all = [header] + rows
    let widths = header.indices.map { column in all.map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0 }
    return all.map { row in
      row.indices.map { column in column == row.count - 1 ? row[column] : row[column].padding(to: widths[column]) }.joined(separator: "  ") + "\n"
    }.joined()
  }
}

extension String {
  /// The string padded with spaces to `width` characters.
  fileprivate func padding(to width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
}
