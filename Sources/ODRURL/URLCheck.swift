public import FoundationEssentials

/// Both parses of a URL string, strict and encoding, the characters that
/// make them differ, and the verdict of each ``URLPolicy``: what
/// `odr url check` prints.
public struct URLCheck: Sendable, Equatable {
  /// One character that is not valid in a URL as it stands.
  public struct Problem: Sendable, Equatable, Encodable, CustomStringConvertible {
    /// The character, described (`space (U+0020)`, `'%' not followed by two hex digits`).
    public let what: String
    /// The component it is in: scheme, user info, host, port, path, query, fragment.
    public let component: String
    /// Its position in the string, counting characters from 0.
    public let offset: Int

    public var description: String { "\(what) in the \(component) at character \(offset)" }
  }

  /// A policy's decision and why.
  public struct Verdict: Sendable, Equatable, Encodable {
    public let accepted: Bool
    /// The URL string the policy would use, when accepted.
    public let url: String?
    /// Why it was refused, or a note (the normalised form) when accepted.
    public let reason: String
  }

  /// The string checked.
  public let input: String
  /// `URL(string: input, encodingInvalidCharacters: false)`.
  public let strictURL: URL?
  /// `URL(string: input)`, which percent-encodes invalid characters.
  public let encodedURL: URL?
  /// The characters that are not valid as they stand (found when asked:
  /// a valid URL never pays for the scan).
  public var problems: [Problem] { Self.problems(in: input) }

  /// Parses `input` both ways.
  public init(_ input: String) {
    self.input = input
    strictURL = URL(string: input, encodingInvalidCharacters: false)
    encodedURL = URL(string: input)
  }

  /// The decision of `policy`.
  public func verdict(under policy: URLPolicy) -> Verdict {
    switch policy {
    case .strict:
      if let strictURL { return Verdict(accepted: true, url: strictURL.absoluteString, reason: "parses as it is") }
      return Verdict(accepted: false, url: nil, reason: "it does not parse as it is: \(problemList)")
    case .encoding:
      guard let encodedURL else {
        return Verdict(accepted: false, url: nil, reason: "it is not a URL even with invalid characters encoded: \(problemList)")
      }
      let normalised = encodedURL.absoluteString
      return Verdict(accepted: true, url: normalised,
                     reason: normalised == input ? "parses as it is" : "normalised to \(Self.shown(normalised)) (\(problemList))")
    case .consistent:
      switch (strictURL, encodedURL) {
      case let (strict?, encoded?) where strict.absoluteString == encoded.absoluteString:
        return Verdict(accepted: true, url: strict.absoluteString, reason: "both modes agree")
      case (nil, let encoded?):
        return Verdict(accepted: false, url: nil,
                       reason: "the modes disagree: strict refuses it, encoding makes it \(Self.shown(encoded.absoluteString)); \(problemList)")
      case let (strict?, encoded?):
        return Verdict(accepted: false, url: nil,
                       reason: "the modes disagree: \(Self.shown(strict.absoluteString)) vs \(Self.shown(encoded.absoluteString))")
      case (_, nil):
        return Verdict(accepted: false, url: nil, reason: "neither mode parses it: \(problemList)")
      }
    }
  }

  private var problemList: String {
    if input.isEmpty { return "the string is empty" }
    if problems.isEmpty { return "its structure is not a URL's (check the brackets of an IPv6 host and the port)" }
    let listed = problems.prefix(5).map(\.description).joined(separator: "; ")
    return problems.count > 5 ? "\(listed); and \(problems.count - 5) more" : listed
  }

  // MARK: Finding the problems

  /// Every character that is not valid in a URL as it stands (RFC 3986),
  /// with the component it is in.
  static func problems(in input: String) -> [Problem] {
    let scalars = Array(input.unicodeScalars)
    let components = componentNames(of: scalars)
    var problems: [Problem] = []
    var seenHash = false
    for (offset, scalar) in scalars.enumerated() {
      var what: String?
      switch scalar {
      case "%":
        let hex = { (i: Int) in i < scalars.count && scalars[i].properties.isASCIIHexDigit }
        if !(hex(offset + 1) && hex(offset + 2)) { what = "'%' not followed by two hex digits" }
      case "#":
        if seenHash { what = "a second '#'" }
        seenHash = true
      case "@":
        let later = scalars[(offset + 1)...].indices.contains { components[$0] == "user info" && scalars[$0] == "@" }
        if components[offset] == "user info" && later { what = "'@' inside the user info" }
      case "[", "]":
        if components[offset] != "host" { what = "'\(scalar)' outside an IPv6 host" }
      case "\"", "<", ">", "\\", "^", "`", "{", "|", "}":
        what = "'\(scalar)'"
      default:
        if scalar.value <= 0x20 || scalar.value == 0x7f { what = describe(scalar) }
        else if scalar.value > 0x7e { what = "non-ASCII '\(scalar)' (\(hex(scalar)))" }
      }
      if let what { problems.append(Problem(what: what, component: components[offset], offset: offset)) }
    }
    return problems
  }

  /// The URL component each scalar falls in, found lexically:
  /// `scheme:` `//user@host:port` `/path` `?query` `#fragment`.
  static func componentNames(of s: [Unicode.Scalar]) -> [String] {
    var names = [String](repeating: "path", count: s.count)
    var i = 0
    // scheme: a letter, then letters, digits, '+', '-', '.', then ':'
    if let first = s.first, first.properties.isAlphabetic, first.isASCII {
      var j = 1
      while j < s.count, s[j].isASCII, s[j].properties.isAlphabetic || s[j].properties.numericType != nil || "+-.".unicodeScalars.contains(s[j]) { j += 1 }
      if j < s.count, s[j] == ":" {
        for k in 0...j { names[k] = "scheme" }
        i = j + 1
      }
    }
    if i + 1 < s.count, s[i] == "/", s[i + 1] == "/" {
      var end = i + 2
      while end < s.count, !"/?#".unicodeScalars.contains(s[end]) { end += 1 }
      let authority = (i + 2)..<end
      let at = authority.last { s[$0] == "@" }
      var hostStart = authority.lowerBound
      if let at {
        for k in authority.lowerBound...at { names[k] = "user info" }
        hostStart = at + 1
      }
      var portStart = end
      if hostStart < end, s[hostStart] == "[" {
        let close = (hostStart..<end).first { s[$0] == "]" } ?? (end - 1)
        if close + 1 < end, s[close + 1] == ":" { portStart = close + 1 }
      } else if let colon = (hostStart..<end).first(where: { s[$0] == ":" }) {
        portStart = colon
      }
      for k in i..<hostStart where names[k] == "path" { names[k] = "host" }
      for k in hostStart..<portStart { names[k] = "host" }
      for k in portStart..<end { names[k] = "port" }
      i = end
    }
    var component = "path"
    for k in i..<s.count {
      if component == "path" && s[k] == "?" { component = "query" }
      if component != "fragment" && s[k] == "#" { component = "fragment" }
      names[k] = component
    }
    return names
  }

  private static func describe(_ scalar: Unicode.Scalar) -> String {
    let names: [UInt32: String] = [0x20: "space", 0x09: "tab", 0x0a: "line feed", 0x0d: "carriage return", 0x00: "NUL", 0x7f: "DEL"]
    return "\(names[scalar.value] ?? "control character") (\(hex(scalar)))"
  }

  private static func hex(_ scalar: Unicode.Scalar) -> String {
    let digits = String(scalar.value, radix: 16, uppercase: true)
    return "U+" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
  }

  /// A string quoted for a message: control characters escaped, shortened.
  public static func shown(_ s: String) -> String {
    let escaped = s.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? $0.escaped(asASCII: true) : String($0) }.joined()
    return "'" + (escaped.count > 200 ? String(escaped.prefix(200)) + "…" : escaped) + "'"
  }
}
