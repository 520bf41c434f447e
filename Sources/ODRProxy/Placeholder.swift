/// What a child of `odr exec --proxy` holds instead of a key's value:
/// `odr_` and 32 letters and digits, made for one key and one run. Letters
/// and digits only, so it survives every encoding a client may apply
/// (percent-encoding, base64 alphabets, JSON, shell quoting) unchanged and
/// is found again wherever it lands in a request.
public struct Placeholder: Sendable, Hashable, CustomStringConvertible {
  public let text: String

  static let prefix = "odr_"
  static let length = 32
  private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)

  /// A new placeholder from the system's random number generator (about
  /// 190 bits: never guessed, never equal to another).
  public init() {
    var generator = SystemRandomNumberGenerator()
    self.init(using: &generator)
  }

  /// A new placeholder from `generator` (tests).
  public init(using generator: inout some RandomNumberGenerator) {
    let letters = (0..<Self.length).map { _ in Self.alphabet[Int(generator.next(upperBound: UInt(Self.alphabet.count)))] }
    text = Self.prefix + String(decoding: letters, as: UTF8.self)
  }

  /// An existing placeholder (nil: not of the form).
  public init?(text: String) {
    guard text.hasPrefix(Self.prefix), text.utf8.count == Self.prefix.utf8.count + Self.length,
          text.utf8.dropFirst(Self.prefix.utf8.count).allSatisfy({ Self.alphabet.contains($0) }) else { return nil }
    self.text = text
  }

  public var description: String { text }
}
