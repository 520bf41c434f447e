public import ODRKeyFormat
#if canImport(Glibc)
import Glibc
#endif

/// What a child of `odr exec --proxy` holds instead of a key's value, made
/// for one key and one run: shaped like the key, so that SDKs that check a
/// key's form (`xoxb-` for a Slack bot token, `sk-`, `ghp_`, `AKIA…`)
/// accept it, and random where the key is secret.
///
/// - The key's public prefix is kept: the leading run up to and including
///   the last `-` or `_` within its first 8 characters (`xoxb-`, `sk-proj-`,
///   `ghp_`), or the `"placeholder"` prefix its metadata names.
/// - The rest has the value's length; each letter or digit is replaced by a
///   random one of its class (lower case, upper case, digit; one class of
///   16 where the value is hexadecimal), other characters kept.
/// - At least 128 bits must be random, else (a short or uniform key) the
///   form is `odr_` and 32 letters and digits (about 190 bits).
/// - An AWS access key id (the variable `AWS_ACCESS_KEY_ID`) is an
///   identifier, not a secret: `AKIA`/`ASIA` and 16 random characters of
///   its alphabet, whatever randomness that leaves (80 bits).
///
/// It never equals the value, and survives percent-encoding, JSON and
/// shell quoting where its key's own characters do.
public struct Placeholder: Sendable, Hashable, CustomStringConvertible {
  public let text: String

  static let prefix = "odr_"
  static let length = 32
  /// The bits of randomness a shaped placeholder must hold.
  static let minimumBits = 128.0
  private static let alphanumerics = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)

  /// A new `odr_` placeholder from the system's random number generator.
  public init() {
    var generator = SystemRandomNumberGenerator()
    self.init(using: &generator)
  }

  /// A new `odr_` placeholder from `generator` (tests).
  public init(using generator: inout some RandomNumberGenerator) {
    self.init(made: Self.prefix + Self.random(from: Self.alphanumerics, count: Self.length, using: &generator))
  }

  /// `made` as it is (tests give the AWS test suite's credentials).
  init(made: String) {
    text = made
  }

  /// A new placeholder shaped like `key`'s value (see the type).
  public init(for key: APIKey) {
    var generator = SystemRandomNumberGenerator()
    self.init(for: key, using: &generator)
  }

  /// A new placeholder shaped like `key`'s value, from `generator` (tests).
  public init(for key: APIKey, using generator: inout some RandomNumberGenerator) {
    let value = key.value
    if VariableName.of(key) == "AWS_ACCESS_KEY_ID", value.utf8.count == 20, value.hasPrefix("AKIA") || value.hasPrefix("ASIA") {
      self.init(made: String(value.prefix(4)) + Self.random(from: Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8), count: 16, using: &generator))
      return
    }
    let kept = key.metadata.placeholder.flatMap { value.hasPrefix($0) ? $0 : nil } ?? Self.publicPrefix(of: value)
    let rest = Array(value.utf8.dropFirst(kept.utf8.count))
    let letters = rest.filter { (0x61...0x7a).contains($0) || (0x41...0x5a).contains($0) }
    // A hexadecimal value (letters of one case, all a-f): its digits and
    // letters are one class, 16 each.
    let lowerHex = !letters.isEmpty && letters.allSatisfy { (0x61...0x66).contains($0) }
    let upperHex = !letters.isEmpty && letters.allSatisfy { (0x41...0x46).contains($0) }
    let hex = lowerHex ? Array("0123456789abcdef".utf8) : upperHex ? Array("0123456789ABCDEF".utf8) : nil
    let classes = rest.map { byte -> [UInt8]? in
      switch byte {
      case 0x61...0x7a: hex ?? Array("abcdefghijklmnopqrstuvwxyz".utf8)
      case 0x41...0x5a: hex ?? Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
      case 0x30...0x39: hex ?? Array("0123456789".utf8)
      default: nil
      }
    }
    let bits = classes.reduce(0.0) { $0 + ($1.map { log2(Double($0.count)) } ?? 0) }
    guard bits >= Self.minimumBits else {
      self.init(using: &generator)
      return
    }
    var made: String
    repeat {
      made = kept + String(decoding: zip(rest, classes).map { byte, alphabet in
        alphabet.map { $0[Int(generator.next(upperBound: UInt($0.count)))] } ?? byte
      }, as: UTF8.self)
    } while made == value
    self.init(made: made)
  }

  /// An existing `odr_` placeholder (nil: not of that form).
  public init?(text: String) {
    guard text.hasPrefix(Self.prefix), text.utf8.count == Self.prefix.utf8.count + Self.length,
          text.utf8.dropFirst(Self.prefix.utf8.count).allSatisfy({ Self.alphanumerics.contains($0) }) else { return nil }
    self.text = text
  }

  public var description: String { text }

  /// A key's public prefix: the leading run up to and including the last
  /// `-` or `_` within its first 8 characters ("" when there is none).
  static func publicPrefix(of value: String) -> String {
    let head = value.utf8.prefix(8)
    guard let last = head.lastIndex(where: { $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }) else { return "" }
    return String(decoding: value.utf8[...last], as: UTF8.self)
  }

  private static func random(from alphabet: [UInt8], count: Int, using generator: inout some RandomNumberGenerator) -> String {
    String(decoding: (0..<count).map { _ in alphabet[Int(generator.next(upperBound: UInt(alphabet.count)))] }, as: UTF8.self)
  }

}
