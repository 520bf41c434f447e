import ODRBase
import FoundationEssentials
package import ODRSigning

/// The text header of an age v1 file: stanzas and the MAC line
/// (age-encryption.org/v1, "Header"), parsed strictly. Every failure here
/// is a `.ageHeader` error.
package struct AgeHeader {
  package struct Stanza {
    package var type: String
    package var arguments: [String]
    package var body: [UInt8]
  }

  package static let intro = "age-encryption.org/v1"
  package static let versionPrefix = Array("age-encryption.org/".utf8)
  /// The spec sets no limit on a stanza line (plugin and post-quantum
  /// stanzas are long); the whole header is capped instead, at far more
  /// than thousands of recipients need, so a hostile file cannot make odr
  /// scan without end.
  package static let maximumSize = 16 << 20

  package var stanzas: [Stanza]
  /// The header's bytes up to and including `---`: what the MAC covers.
  package var macInput: [UInt8]
  package var mac: [UInt8]
  /// Where the payload starts.
  package var payloadOffset: Int

  /// The header bytes for `stanzas`, up to and including `---`.
  package static func encode(_ stanzas: [Stanza]) -> [UInt8] {
    var text = intro + "\n"
    for stanza in stanzas {
      text += "-> " + ([stanza.type] + stanza.arguments).joined(separator: " ") + "\n"
      var body = Base64.unpadded(stanza.body)[...]
      while body.count >= 64 {
        text += body.prefix(64) + "\n"
        body = body.dropFirst(64)
      }
      text += body + "\n"  // the final line is shorter than 64, possibly empty
    }
    return Array((text + "---").utf8)
  }

  /// Parses the header at the start of `file`.
  package init(parsing file: [UInt8]) throws {
    var position = 0
    func line() throws -> String {
      guard let end = file[position...].prefix(Self.maximumSize - position).firstIndex(of: UInt8(ascii: "\n")) else {
        throw position + 1 >= Self.maximumSize ? Self.malformed("the header is larger than 16 MiB") : Self.malformed("the header ends early")
      }
      let bytes = file[position..<end]
      guard bytes.allSatisfy({ (32...126).contains($0) }) else { throw Self.malformed("the header has a byte that is not printable ASCII") }
      position = end + 1
      return String(decoding: bytes, as: UTF8.self)
    }
    guard file.starts(with: Self.versionPrefix) else {
      throw TrustError(.ageHeader, "This is not an age file (it does not start with age-encryption.org/v1).")
    }
    guard try line() == Self.intro else { throw TrustError(.ageHeader, "This age file has a version other than v1, which odr does not read.") }
    stanzas = []
    while true {
      let start = position
      let text = try line()
      if text.hasPrefix("---") {
        guard text.hasPrefix("--- "), let mac = Base64.decodeUnpadded(text.dropFirst(4)), mac.count == 32 else {
          throw Self.malformed("the header MAC line is malformed")
        }
        self.mac = mac
        macInput = Array(file[..<(start + 3)])
        payloadOffset = position
        return
      }
      let words = text.split(separator: " ", omittingEmptySubsequences: false)
      guard words.count >= 2, words[0] == "->", words.dropFirst().allSatisfy({ !$0.isEmpty }) else {
        throw Self.malformed("a stanza line is malformed")
      }
      var body: [UInt8] = []
      while true {
        let bodyLine = try line()
        guard bodyLine.count <= 64, let bytes = Base64.decodeUnpadded(bodyLine[...]) else { throw Self.malformed("a stanza body is not canonical base64 in 64-column lines") }
        body += bytes
        if bodyLine.count < 64 { break }
      }
      stanzas.append(Stanza(type: String(words[1]), arguments: words.dropFirst(2).map(String.init), body: body))
    }
  }

  package static func malformed(_ what: String) -> TrustError {
    TrustError(.ageHeader, "The age file's header is malformed: \(what).")
  }
}

extension AgeHeader.Stanza {
  /// Checks the shape the spec requires of each native stanza type before
  /// any key is tried, so a malformed stanza is reported as such whoever
  /// opens the file. Unknown types (grease, plugins) are left alone.
  package func validate() throws {
    func argument(_ index: Int, bytes: Int) throws {
      guard let value = Base64.decodeUnpadded(arguments[index][...]), value.count == bytes else {
        throw AgeHeader.malformed("a \(type) stanza's argument \(index + 1) is not the canonical base64 of \(bytes) bytes")
      }
    }
    func shape(arguments count: Int, body: Int?) throws {
      guard arguments.count == count else { throw AgeHeader.malformed("a \(type) stanza has \(arguments.count) arguments instead of \(count)") }
      if let body, self.body.count != body { throw AgeHeader.malformed("a \(type) stanza's body is \(self.body.count) bytes instead of \(body)") }
    }
    switch type {
    case "X25519":
      try shape(arguments: 1, body: 32)
      try argument(0, bytes: 32)
    case "mlkem768x25519":
      try shape(arguments: 1, body: 32)
      try argument(0, bytes: 1120)
    case "ssh-ed25519":
      try shape(arguments: 2, body: 32)
      try argument(0, bytes: 4)
      try argument(1, bytes: 32)
    case "ssh-rsa":
      try shape(arguments: 1, body: nil)
      try argument(0, bytes: 4)
    case AgeRecipient.kmsStanzaType:
      // One argument, the key's ARN; the body is KMS's ciphertext blob
      // (about 170 bytes for a file key; KMS's own limit is 6,144).
      guard arguments.count == 1, KMSKeyARN(arguments[0]) != nil else { throw AgeHeader.malformed("an \(type) stanza's argument is not one KMS key ARN") }
      guard (1...6144).contains(body.count) else { throw AgeHeader.malformed("an \(type) stanza's body is \(body.count) bytes, not a KMS ciphertext (1 to 6,144)") }
    case "scrypt":
      try shape(arguments: 2, body: 32)
      try argument(0, bytes: 16)
      let factor = arguments[1]
      guard let first = factor.first, first != "0", factor.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(factor), value <= 22 else {
        throw AgeHeader.malformed("an scrypt stanza's work factor is not a decimal number from 1 to 22")
      }
    default:
      break
    }
  }
}
