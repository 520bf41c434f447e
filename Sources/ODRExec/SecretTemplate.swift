import ODRBase

/// A template for `odr inject`: text with `{{ odr://KEY }}` or
/// `{{ odr://SERVICE/KEY }}` references (white space inside the braces is
/// allowed). `{{"{{"}}` writes a literal `{{`. Anything else between `{{`
/// and `}}` is an error naming `file:line:column`.
public struct SecretTemplate: Sendable {
  enum Part: Sendable {
    case text(String)
    case reference(SecretReference, place: String)
  }

  let parts: [Part]

  /// The references, in order of appearance.
  public var references: [(reference: SecretReference, place: String)] {
    parts.compactMap { if case .reference(let reference, let place) = $0 { (reference, place) } else { nil } }
  }

  /// Parses `text` read from `path` (named in messages).
  public init(path: String, text: String) throws {
    var parts: [Part] = []
    var literal = ""
    var rest = Substring(text)
    var line = 1, column = 1
    func advance(over consumed: Substring) {
      for c in consumed {
        if c == "\n" || c == "\r\n" { line += 1; column = 1 } else { column += 1 }
      }
    }
    while let open = rest.firstRange(of: "{{") {
      let before = rest[..<open.lowerBound]
      literal += before
      advance(over: before)
      let place = "\(path):\(line):\(column)"
      let afterOpen = rest[open.upperBound...]
      if afterOpen.hasPrefix("\"{{\"}}") {
        literal += "{{"
        advance(over: rest[open.lowerBound..<afterOpen.index(afterOpen.startIndex, offsetBy: 6)])
        rest = afterOpen.dropFirst(6)
        continue
      }
      guard let close = afterOpen.firstRange(of: "}}") else {
        throw ExecError(.invalidInput, "\(place): this {{ is never closed by }} (write {{\"{{\"}} for a literal {{).")
      }
      let inside = afterOpen[..<close.lowerBound].trimmingBlanks
      do { parts.append(.text(literal)); literal = ""; parts.append(.reference(try SecretReference(inside), place: place)) } catch let error as ExecError {
        throw ExecError(.invalidInput, "\(place): \(error.message) between {{ and }} (write {{\"{{\"}} for a literal {{).", underlying: error)
      }
      advance(over: rest[open.lowerBound..<close.upperBound])
      rest = afterOpen[close.upperBound...]
    }
    literal += rest
    parts.append(.text(literal))
    self.parts = parts
  }

  /// The text with each reference replaced by its value.
  public func render(_ values: [SecretReference: String]) -> String {
    parts.map { part in
      switch part {
      case .text(let text): text
      case .reference(let reference, _): values[reference] ?? ""
      }
    }.joined()
  }
}

extension Substring {
  var trimmingBlanks: Substring {
    let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
    return self.drop(while: blank).reversed().drop(while: blank).reversed().reduce(into: Substring()) { $0.append($1) }
  }
}
