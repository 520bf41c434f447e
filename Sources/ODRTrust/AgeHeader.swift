import FoundationEssentials

/// The text header of an age v1 file: stanzas and the MAC line
/// (age-encryption.org/v1, "Header"), parsed strictly.
struct AgeHeader {
  struct Stanza {
    var type: String
    var arguments: [String]
    var body: [UInt8]
  }

  static let intro = "age-encryption.org/v1"

  var stanzas: [Stanza]
  /// The header's bytes up to and including `---`: what the MAC covers.
  var macInput: [UInt8]
  var mac: [UInt8]
  /// Where the payload starts.
  var payloadOffset: Int

  /// The header bytes for `stanzas`, up to and including `---`.
  static func encode(_ stanzas: [Stanza]) -> [UInt8] {
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
  init(parsing file: [UInt8]) throws {
    var position = 0
    func line() throws -> String {
      guard let end = file[position...].firstIndex(of: UInt8(ascii: "\n")), end - position <= 4096 else {
        throw Self.malformed("the header ends early")
      }
      let bytes = file[position..<end]
      guard bytes.allSatisfy({ (32...126).contains($0) }) else { throw Self.malformed("the header has a byte that is not printable ASCII") }
      position = end + 1
      return String(decoding: bytes, as: UTF8.self)
    }
    guard try line() == Self.intro else { throw TrustError(.malformed, "This is not an age v1 file (it does not start with age-encryption.org/v1).") }
    stanzas = []
    while true {
      let start = position
      let text = try line()
      if text.hasPrefix("--- ") {
        guard let mac = Base64.decodeUnpadded(text.dropFirst(4)), mac.count == 32 else { throw Self.malformed("the header MAC line is malformed") }
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
        guard bodyLine.count <= 64, let bytes = Base64.decodeUnpadded(bodyLine[...]) else { throw Self.malformed("a stanza body is not canonical base64") }
        body += bytes
        if bodyLine.count < 64 { break }
      }
      stanzas.append(Stanza(type: String(words[1]), arguments: words.dropFirst(2).map(String.init), body: body))
    }
  }

  static func malformed(_ what: String) -> TrustError {
    TrustError(.malformed, "The age file is damaged or truncated: \(what).")
  }
}
