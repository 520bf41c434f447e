import FoundationEssentials
import ODRBase
import ODRKeyFormat

/// A dotenv file, read the way python-dotenv reads one, strictly: every
/// line must parse, or the file is refused naming `file:line:column`.
///
/// Accepted: `KEY=value` and `export KEY=value`, blank lines, `#` comments
/// (after an unquoted value only when preceded by white space, after a
/// closing quote directly); unquoted values (trailing white space dropped);
/// single-quoted values (`\'` and `\\` decoded) and double-quoted values
/// (`\\ \' \" \a \b \f \n \r \t \v` decoded), both of which may span
/// lines; CRLF and CR line ends (read as LF, as Python reads text, also
/// inside quoted values); a UTF-8 byte order mark at the start (skipped, as
/// docker compose does; python-dotenv would make it part of the first name).
///
/// A value that has the shape of a reference, `odr://KEY` or
/// `odr://SERVICE/KEY` (quoted or not, with a valid key name and service),
/// is resolved from the keyring; any other value, `odr://host/a/b` among
/// them, is passed through as it is.
///
/// `${VAR}` (a `${` closed by a `}`) in a value is refused, naming its
/// place: python-dotenv would expand it (in any quotes; docker compose
/// outside single quotes), odr passes values as written, so the file would
/// mean two things. Not supported either: keys without `=` and
/// single-quoted key names.
public struct DotenvFile: Sendable {
  /// One variable.
  public struct Entry: Sendable, Equatable {
    public enum Value: Sendable, Equatable {
      case plain(String)
      case reference(SecretReference)
    }
    public let name: String
    public let value: Value
    /// Where it is, `file:line:column` of its value.
    public let place: String
  }

  public let path: String
  public let entries: [Entry]

  /// Parses `text` read from `path` (named in messages).
  public init(path: String, text: String) throws {
    self.path = path
    // Line ends as Python reads text files: CRLF and CR become LF (inside
    // quoted values too).
    var normalized = text.replacing("\r\n", with: "\n").replacing("\r", with: "\n")
    if normalized.unicodeScalars.first == "\u{FEFF}" { normalized.unicodeScalars.removeFirst() }
    var parser = Parser(scalars: Array(normalized.unicodeScalars), path: path)
    entries = try parser.parse()
  }

  private struct Parser {
    let scalars: [Unicode.Scalar]
    let path: String
    var index = 0
    var line = 1
    var lineStart = 0

    var place: String { "\(path):\(line):\(index - lineStart + 1)" }

    func fail(_ what: String) -> ExecError { ExecError(.invalidInput, "\(place): \(what).") }

    var current: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

    mutating func advance() {
      let scalar = scalars[index]
      index += 1
      if scalar == "\n" || (scalar == "\r" && current != "\n") {
        line += 1
        lineStart = index
      }
    }

    mutating func skipBlanks() { while let c = current, c == " " || c == "\t" { advance() } }

    var atLineEnd: Bool { current == nil || current == "\n" || current == "\r" }

    mutating func endLine(afterQuote: Bool = false) throws {
      skipBlanks()
      if current == "#" { while !atLineEnd { advance() } }
      guard atLineEnd else {
        throw fail(afterQuote ? "expected the end of the line or a # comment after the closing quote" : "expected the end of the line or a # comment")
      }
      if current == "\r" { advance() }
      if current == "\n" { advance() }
    }

    mutating func parse() throws -> [Entry] {
      var entries: [Entry] = []
      while current != nil {
        while let c = current, c == " " || c == "\t" || c == "\n" || c == "\r" { advance() }
        guard current != nil else { break }
        if current == "#" { try endLine(); continue }
        // export
        let save = (index, line, lineStart)
        if scalars[index...].starts(with: "export".unicodeScalars) {
          for _ in 0..<6 { advance() }
          if current == " " || current == "\t" { skipBlanks() } else { (index, line, lineStart) = save }
        }
        let nameStart = index
        while let c = current, c != "=", c != "#", !c.properties.isWhitespace { advance() }
        let name = String(String.UnicodeScalarView(scalars[nameStart..<index]))
        guard !name.isEmpty else { throw fail("expected a variable name") }
        guard VariableName.isPortable(name) else {
          throw ExecError(.invalidInput, "\(path):\(line):\(nameStart - lineStart + 1): '\(name.prefix(64))' is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*).")
        }
        skipBlanks()
        guard current == "=" else { throw fail("expected '=' after \(name)") }
        advance()
        skipBlanks()
        let valuePlace = place
        let (text, quoted) = try value()
        try endLine(afterQuote: quoted)
        // a value that is not an odr:// reference is a plain value
        if let reference = dropping(.isTheAnswer, { try SecretReference(text) }) {
          entries.append(Entry(name: name, value: .reference(reference), place: valuePlace))
        } else {
          entries.append(Entry(name: name, value: .plain(text), place: valuePlace))
        }
      }
      return entries
    }

    /// Throws when the raw value `scalars[start..<end]` (its first scalar at
    /// `line`, `column`) holds `${…}`, which python-dotenv would expand.
    func refuseExpansion(_ start: Int, _ end: Int, line: Int, column: Int) throws {
      var (line, column) = (line, column)
      for position in start..<end {
        if scalars[position] == "$", position + 1 < end, scalars[position + 1] == "{", scalars[(position + 2)..<end].contains("}") {
          throw ExecError(.invalidInput, "\(path):\(line):\(column): ${…} would be expanded by python-dotenv (and by docker compose outside single quotes), but odr passes values as written; write the value out.")
        }
        if scalars[position] == "\n" { (line, column) = (line + 1, 1) } else { column += 1 }
      }
    }

    /// The value at the cursor and whether it was quoted.
    mutating func value() throws -> (String, Bool) {
      guard let quote = current, quote == "'" || quote == "\"" else {
        let start = index
        while !atLineEnd { advance() }
        var text = Array(scalars[start..<index])
        // A comment starts at white space followed by '#'.
        if let hash = text.indices.first(where: { text[$0] == "#" && $0 > 0 && text[$0 - 1].properties.isWhitespace }) {
          text = Array(text[..<hash])
        }
        while let last = text.last, last.properties.isWhitespace { text.removeLast() }
        try refuseExpansion(start, start + text.count, line: line, column: start - lineStart + 1)
        return (String(String.UnicodeScalarView(text)), false)
      }
      let open = place
      advance()
      let (start, startLine, startColumn) = (index, line, index - lineStart + 1)
      var text = String.UnicodeScalarView()
      while true {
        guard let c = current else { throw ExecError(.invalidInput, "\(open): this \(quote == "'" ? "single" : "double")-quoted value is never closed.") }
        if c == quote {
          try refuseExpansion(start, index, line: startLine, column: startColumn)
          advance()
          break
        }
        if c == "\\", index + 1 < scalars.count {
          let next = scalars[index + 1]
          let decoded: Unicode.Scalar? = quote == "'"
            ? (next == "'" || next == "\\" ? next : nil)
            : ["\\": "\\", "'": "'", "\"": "\"", "a": "\u{07}", "b": "\u{08}", "f": "\u{0C}", "n": "\n", "r": "\r", "t": "\t", "v": "\u{0B}"][next]
          if let decoded {
            advance(); advance()
            text.append(decoded)
            continue
          }
        }
        text.append(c)
        advance()
      }
      return (String(text), true)
    }
  }
}
