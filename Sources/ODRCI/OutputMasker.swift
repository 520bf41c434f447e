import FoundationEssentials

/// Replaces secret values in a byte stream with `***`, chunk by chunk.
///
/// Each value is masked in the forms it commonly leaks in: as is; in
/// base64 and base64url (padded or not, and the part of it that stays the
/// same at any offset inside a longer base64 text, such as a Basic auth
/// header); percent-encoded (upper- or lower-case hex, `+` for space); JSON-
/// escaped; and, for multi-line values, each line of 8 or more characters.
///
/// A value split across chunks is still masked: bytes that could be the
/// start of a secret are held back until the next chunk shows whether they
/// are (at most the longest form's length minus one). The longest match
/// wins, so no tail of a longer form is left visible.
public struct OutputMasker: Sendable {
  /// What each match is replaced with.
  public static let replacement: [UInt8] = Array("***".utf8)

  private let patterns: [[UInt8]]  // longest first
  private let startsPattern: [Bool]  // indexed by first byte
  private var held: [UInt8] = []

  /// A masker for `values` (empty values are ignored).
  public init(values: [String]) {
    var forms = Set<[UInt8]>()
    for value in values where !value.isEmpty {
      for form in Self.forms(of: value) where !form.isEmpty { forms.insert(form) }
    }
    patterns = forms.sorted { $0.count != $1.count ? $0.count > $1.count : $0.lexicographicallyPrecedes($1) }
    var starts = [Bool](repeating: false, count: 256)
    for pattern in patterns { starts[Int(pattern[0])] = true }
    startsPattern = starts
  }

  /// The masked bytes that can be written now for `chunk`.
  public mutating func mask(_ chunk: some Collection<UInt8>) -> [UInt8] {
    held.append(contentsOf: chunk)
    return scan(final: false)
  }

  /// The rest, at the end of the stream.
  public mutating func finish() -> [UInt8] { scan(final: true) }

  private mutating func scan(final: Bool) -> [UInt8] {
    var output: [UInt8] = []
    output.reserveCapacity(held.count)
    var i = 0
    let count = held.count
    scanning: while i < count {
      let byte = held[i]
      guard startsPattern[Int(byte)] else {
        output.append(byte)
        i += 1
        continue
      }
      let available = count - i
      for pattern in patterns {
        if pattern.count <= available {
          if held[i..<(i + pattern.count)].elementsEqual(pattern) {
            output += Self.replacement
            i += pattern.count
            continue scanning
          }
        } else if !final && held[i..<count].elementsEqual(pattern[0..<available]) {
          // Could be a longer form cut by the chunk boundary: wait.
          held.removeFirst(i)
          return output
        }
      }
      output.append(byte)
      i += 1
    }
    held.removeAll(keepingCapacity: true)
    return output
  }

  // MARK: Forms

  static func forms(of value: String) -> [[UInt8]] {
    let bytes = Array(value.utf8)
    var forms: [[UInt8]] = [bytes]
    for alphabet in [base64Alphabet, base64URLAlphabet] {
      let encoded = base64(bytes, alphabet: alphabet)
      forms.append(encoded)
      forms.append(Array(encoded.prefix { $0 != UInt8(ascii: "=") }))
      // Inside a longer base64 text the value starts 0, 1 or 2 bytes into
      // a 3-byte group; keep the characters that depend on it alone.
      for shift in 0...2 {
        let shifted = base64([UInt8](repeating: 0, count: shift) + bytes, alphabet: alphabet)
        let first = (8 * shift + 5) / 6
        let last = (8 * (shift + bytes.count)) / 6
        if last - first >= 6 { forms.append(Array(shifted[first..<last])) }
      }
    }
    forms.append(percentEncoded(bytes, upper: true, plusForSpace: false))
    forms.append(percentEncoded(bytes, upper: false, plusForSpace: false))
    forms.append(percentEncoded(bytes, upper: true, plusForSpace: true))
    forms.append(jsonEscaped(bytes, slash: false))
    forms.append(jsonEscaped(bytes, slash: true))
    if value.contains(where: \.isNewline) {
      for line in value.split(whereSeparator: \.isNewline) where line.count >= 8 { forms.append(Array(line.utf8)) }
    }
    return forms
  }

  static let base64Alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
  static let base64URLAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

  static func base64(_ bytes: [UInt8], alphabet: [UInt8]) -> [UInt8] {
    var out: [UInt8] = []
    var i = 0
    while i < bytes.count {
      let n = min(3, bytes.count - i)
      let b0 = UInt32(bytes[i]), b1 = n > 1 ? UInt32(bytes[i + 1]) : 0, b2 = n > 2 ? UInt32(bytes[i + 2]) : 0
      let group = b0 << 16 | b1 << 8 | b2
      for k in 0..<4 {
        out.append(k <= n ? alphabet[Int((group >> UInt32(18 - 6 * k)) & 63)] : UInt8(ascii: "="))
      }
      i += 3
    }
    return out
  }

  static func percentEncoded(_ bytes: [UInt8], upper: Bool, plusForSpace: Bool) -> [UInt8] {
    let hex = Array((upper ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
    var out: [UInt8] = []
    for b in bytes {
      switch b {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
           UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
        out.append(b)
      case UInt8(ascii: " ") where plusForSpace:
        out.append(UInt8(ascii: "+"))
      default:
        out += [UInt8(ascii: "%"), hex[Int(b >> 4)], hex[Int(b & 15)]]
      }
    }
    return out
  }

  /// `bytes` as inside a JSON string; `slash`: with `/` as `\/`, as
  /// Foundation's encoder writes it.
  static func jsonEscaped(_ bytes: [UInt8], slash: Bool) -> [UInt8] {
    let hex = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    for b in bytes {
      switch b {
      case UInt8(ascii: "/") where slash: out += Array("\\/".utf8)
      case UInt8(ascii: "\""): out += Array("\\\"".utf8)
      case UInt8(ascii: "\\"): out += Array("\\\\".utf8)
      case UInt8(ascii: "\n"): out += Array("\\n".utf8)
      case UInt8(ascii: "\r"): out += Array("\\r".utf8)
      case UInt8(ascii: "\t"): out += Array("\\t".utf8)
      case 0..<0x20: out += Array("\\u00".utf8) + [hex[Int(b >> 4)], hex[Int(b & 15)]]
      default: out.append(b)
      }
    }
    return out
  }
}
