import ODRBase
package import ODRSigning
/// age's ASCII armor: strict PEM (RFC 7468 §3) with the case-sensitive
/// label "AGE ENCRYPTED FILE". As the spec asks, only white space before
/// and after the block is tolerated, LF or CRLF line ends, and canonical
/// padded base64 in 64-column lines.
package enum AgeArmor {
  package static let begin = Array("-----BEGIN AGE ENCRYPTED FILE-----".utf8)
  package static let end = Array("-----END AGE ENCRYPTED FILE-----".utf8)

  /// Whether `file` is meant to be armored: it is not a binary age file
  /// and a PEM-like boundary (`-----`) appears in its first KiB. Such a
  /// file is then held to the strict rules, so a damaged armor is
  /// reported as armor.
  package static func isArmored(_ file: [UInt8]) -> Bool {
    guard !file.starts(with: AgeHeader.versionPrefix) else { return false }
    let head = file.prefix(1024)
    let mark = Array("-----".utf8)
    return head.indices.contains { head[$0...].starts(with: mark) }
  }

  /// The binary age file inside the armor.
  package static func decode(_ file: [UInt8]) throws -> [UInt8] {
    let space: Set<UInt8> = [0x20, 0x09, 0x0D, 0x0A]
    guard let first = file.firstIndex(where: { !space.contains($0) }),
          let last = file.lastIndex(where: { !space.contains($0) }) else { throw failure("the file is empty") }
    var lines = file[first...last].split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
      line.last == 0x0D ? line.dropLast() : line
    }
    guard lines.first.map(Array.init) == begin else { throw failure("it must start with -----BEGIN AGE ENCRYPTED FILE-----, alone on its line") }
    guard lines.count >= 2, lines.last.map(Array.init) == end else { throw failure("it must end with -----END AGE ENCRYPTED FILE-----, alone on its line") }
    lines = Array(lines.dropFirst().dropLast())
    for (index, line) in lines.enumerated() {
      let isLast = index == lines.count - 1
      guard isLast ? (1...64).contains(line.count) : line.count == 64 else {
        throw failure("line \(index + 2) has \(line.count) characters; every line but the last has 64, the last 1 to 64")
      }
    }
    let text = String(decoding: lines.joined(), as: UTF8.self)
    guard let bytes = Base64.decodePadded(text[...]) else { throw failure("its body is not canonical padded base64") }
    return bytes
  }

  package static func failure(_ what: String) -> TrustError {
    TrustError(.ageArmor, "The ASCII-armored age file is not strict PEM: \(what).")
  }
}
