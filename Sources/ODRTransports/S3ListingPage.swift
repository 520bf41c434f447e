/// One page of an S3 `ListObjectsV2` answer (`GET /?list-type=2`): the keys
/// it lists and, when there are more, the token that asks for the next page.
///
/// Read, not parsed as a whole: the page is XML from a host, so only the
/// `<Key>`, `<IsTruncated>` and `<NextContinuationToken>` elements are taken,
/// their text unescaped (the five XML entities and numeric references);
/// anything else is ignored. Bounded: at most ``maxBytes`` are read and
/// ``maxKeys`` keys returned.
public struct S3ListingPage: Sendable, Equatable {
  /// The keys, in the order listed.
  public var keys: [String]
  /// The next page's continuation token; nil on the last page.
  public var next: String?

  /// The largest page read (S3 pages hold at most 1,000 keys of ≤ 1 KiB).
  public static let maxBytes = 2 << 20
  /// The most keys one page may list.
  public static let maxKeys = 1_000

  public init(keys: [String], next: String?) {
    self.keys = keys
    self.next = next
  }

  /// Reads a page; throws ``Refusal`` for one too large, with too many
  /// keys, or truncated without a token.
  public init(_ bytes: [UInt8]) throws(Refusal) {
    guard bytes.count <= Self.maxBytes else { throw Refusal("the listing is over \(Self.maxBytes) bytes") }
    let text = String(decoding: bytes, as: UTF8.self)
    var keys: [String] = []
    for raw in Self.elements("Key", in: text) {
      guard keys.count < Self.maxKeys else { throw Refusal("the listing names more than \(Self.maxKeys) keys in one page") }
      keys.append(try Self.unescaped(raw))
    }
    let truncated = Self.elements("IsTruncated", in: text).first == "true"
    let token = try Self.elements("NextContinuationToken", in: text).first.map(Self.unescaped)
    if truncated && (token ?? "").isEmpty { throw Refusal("the listing says it is truncated but gives no continuation token") }
    self.init(keys: keys, next: truncated ? token : nil)
  }

  /// Why a page was refused.
  public struct Refusal: Error, Sendable, Equatable {
    public let reason: String
    init(_ reason: String) { self.reason = reason }
  }

  /// The texts of every `<name>…</name>` element (no attributes, not nested).
  private static func elements(_ name: String, in text: String) -> [Substring] {
    var found: [Substring] = []
    let open = "<\(name)>", close = "</\(name)>"
    var rest = text[...]
    while let start = rest.firstRange(of: open) {
      guard let end = rest[start.upperBound...].firstRange(of: close) else { break }
      found.append(rest[start.upperBound..<end.lowerBound])
      rest = rest[end.upperBound...]
    }
    return found
  }

  /// `text` with XML's character references replaced.
  private static func unescaped(_ text: Substring) throws(Refusal) -> String {
    guard text.contains("&") else { return String(text) }
    var result = ""
    var rest = text
    while let amp = rest.firstIndex(of: "&") {
      result += rest[..<amp]
      guard let semicolon = rest[amp...].prefix(12).firstIndex(of: ";") else { throw Refusal("a character reference that does not end") }
      let name = rest[rest.index(after: amp)..<semicolon]
      switch name {
      case "amp": result += "&"
      case "lt": result += "<"
      case "gt": result += ">"
      case "quot": result += "\""
      case "apos": result += "'"
      default:
        let number = name.hasPrefix("#x") ? UInt32(name.dropFirst(2), radix: 16) : name.hasPrefix("#") ? UInt32(name.dropFirst(), radix: 10) : nil
        guard let number, let scalar = Unicode.Scalar(number) else { throw Refusal("an unknown character reference &\(name.prefix(10));") }
        result.unicodeScalars.append(scalar)
      }
      rest = rest[rest.index(after: semicolon)...]
    }
    return result + rest
  }
}
