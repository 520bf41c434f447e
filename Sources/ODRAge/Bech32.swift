/// Bech32 (BIP 173) as age uses it for recipients and identities: the
/// original checksum (not Bech32m) and no 90-character limit.
package enum Bech32 {
  private static let alphabet = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)
  private static let values: [UInt8: UInt8] = Dictionary(uniqueKeysWithValues: alphabet.enumerated().map { ($1, UInt8($0)) })

  /// Encodes `data` under the human-readable part `hrp`, lowercase.
  package static func encode(hrp: String, data: [UInt8]) -> String {
    let hrp = hrp.lowercased()
    let words = convert(data, from: 8, to: 5, pad: true) ?? []
    let checksum = self.checksum(hrp: Array(hrp.utf8), words: words)
    return hrp + "1" + String(decoding: (words + checksum).map { alphabet[Int($0)] }, as: UTF8.self)
  }

  /// Decodes a Bech32 string: its human-readable part (lowercased) and data.
  /// Nil when the string is mixed-case, has a bad character or checksum, or
  /// its padding is not canonical.
  package static func decode(_ string: String) -> (hrp: String, data: [UInt8])? {
    let bytes = Array(string.utf8)
    let lower = string.lowercased(), upper = string.uppercased()
    guard string == lower || string == upper, bytes.allSatisfy({ (33...126).contains($0) }) else { return nil }
    let text = Array(lower.utf8)
    guard let separator = text.lastIndex(of: UInt8(ascii: "1")), separator >= 1, text.count - separator - 1 >= 6 else { return nil }
    let hrp = Array(text[..<separator])
    var words: [UInt8] = []
    for byte in text[(separator + 1)...] {
      guard let value = values[byte] else { return nil }
      words.append(value)
    }
    guard polymod(expand(hrp) + words) == 1 else { return nil }
    guard let data = convert(Array(words.dropLast(6)), from: 5, to: 8, pad: false) else { return nil }
    return (String(decoding: hrp, as: UTF8.self), data)
  }

  /// True when `string` is written in Bech32's alphabet, lower case, with
  /// a separator and room for a checksum, but the checksum does not match:
  /// a character mistyped, swapped or lost.
  package static func failsOnlyItsChecksum(_ string: String) -> Bool {
    let text = Array(string.utf8)
    guard string == string.lowercased(), let separator = text.lastIndex(of: UInt8(ascii: "1")), separator >= 1,
          text.count - separator - 1 >= 6, text[(separator + 1)...].allSatisfy({ values[$0] != nil }) else { return false }
    return decode(string) == nil
  }

  private static func polymod(_ values: [UInt8]) -> UInt32 {
    let generator: [UInt32] = [0x3b6a_57b2, 0x2650_8e6d, 0x1ea1_19fa, 0x3d42_33dd, 0x2a14_62b3]
    var chk: UInt32 = 1
    for value in values {
      let top = chk >> 25
      chk = (chk & 0x1ff_ffff) << 5 ^ UInt32(value)
      for i in 0..<5 where (top >> i) & 1 == 1 { chk ^= generator[i] }
    }
    return chk
  }

  private static func expand(_ hrp: [UInt8]) -> [UInt8] {
    hrp.map { $0 >> 5 } + [0] + hrp.map { $0 & 31 }
  }

  private static func checksum(hrp: [UInt8], words: [UInt8]) -> [UInt8] {
    let mod = polymod(expand(hrp) + words + [0, 0, 0, 0, 0, 0]) ^ 1
    return (0..<6).map { UInt8((mod >> (5 * (5 - $0))) & 31) }
  }

  /// Regroups bits; without `pad`, leftover bits must be fewer than `from`
  /// and all zero (canonical encoding).
  private static func convert(_ data: [UInt8], from: Int, to: Int, pad: Bool) -> [UInt8]? {
    var accumulator = 0, bits = 0
    var result: [UInt8] = []
    let mask = (1 << to) - 1
    for value in data {
      accumulator = (accumulator << from) | Int(value)
      bits += from
      while bits >= to {
        bits -= to
        result.append(UInt8((accumulator >> bits) & mask))
      }
    }
    if pad {
      if bits > 0 { result.append(UInt8((accumulator << (to - bits)) & mask)) }
    } else if bits >= from || (accumulator << (to - bits)) & mask != 0 {
      return nil
    }
    return result
  }
}
