import Crypto
import Foundation
import ODRSigning
import Testing

/// odr's OpenPGP packets read back by a reader written here from RFC 9580
/// (§4.2 packet headers, §5.2.3 v4 signatures, §5.2.4 the hashed trailer,
/// §3.2 MPIs), not by odr's writer: the fields, the lengths in each header
/// form, the fingerprint, and an Ed25519 signature over the right digest.
/// `gpgv` and `sqv` read the same bytes in scripts/checks/release.
@Suite struct OpenPGPPacketTests {
  struct Packet { let tag: UInt8; let body: [UInt8]; let headerLength: Int }

  /// Splits `data` into current-format packets.
  static func packets(_ data: Data) throws -> [Packet] {
    var bytes = [UInt8](data)[...], result: [Packet] = []
    while let first = bytes.first {
      try #require(first & 0xC0 == 0xC0, "not a current-format packet")
      let lengthOctet = Int(bytes[bytes.startIndex + 1])
      let (length, header): (Int, Int) = switch lengthOctet {
      case ..<192: (lengthOctet, 2)
      case ..<224: ((lengthOctet - 192) << 8 + Int(bytes[bytes.startIndex + 2]) + 192, 3)
      default: (bytes[(bytes.startIndex + 2)..<(bytes.startIndex + 6)].reduce(0) { $0 << 8 | Int($1) }, 6)
      }
      let body = bytes.dropFirst(header).prefix(length)
      try #require(body.count == length)
      result.append(Packet(tag: first & 0x3F, body: Array(body), headerLength: header))
      bytes = bytes.dropFirst(header + length)
    }
    return result
  }

  /// An MPI at `offset`: its value bytes and the offset after it.
  static func mpi(_ body: [UInt8], at offset: Int) -> (value: [UInt8], next: Int) {
    let bits = Int(body[offset]) << 8 | Int(body[offset + 1])
    let count = (bits + 7) / 8
    return (Array(body[(offset + 2)..<(offset + 2 + count)]), offset + 2 + count)
  }

  static func be16(_ body: [UInt8], _ offset: Int) -> Int { Int(body[offset]) << 8 | Int(body[offset + 1]) }

  @Test func aDetachedSignatureVerifiesOverTheHashedTrailer() throws {
    let key = SigningKey()
    let signer = OpenPGPSignature(key: key, userID: "odr test <test@example.com>")
    let document = Data("SHA256SUMS contents\n".utf8)
    let time = Date(timeIntervalSince1970: 1_700_000_000)
    let packets = try Self.packets(try signer.detachedSignature(of: document, at: time))
    let body = try #require(packets.count == 1 && packets[0].tag == 2 ? packets[0].body : nil)
    #expect(Array(body[0..<4]) == [4, 0x00, 22, 8])  // v4, binary document, EdDSALegacy, SHA-256
    let hashedLength = Self.be16(body, 4)
    let hashedEnd = 6 + hashedLength
    // The hashed subpackets: creation time (2) and issuer fingerprint (33).
    #expect(Array(body[6..<12]) == [5, 2] + [0x65, 0x53, 0xF1, 0x00])  // 1,700,000,000 big-endian
    #expect(Array(body[12..<14]) == [22, 33] && body[14] == 4)
    #expect(Array(body[15..<35]).map { String(format: "%02X", $0) }.joined() == signer.fingerprint)
    let unhashedLength = Self.be16(body, hashedEnd)
    var offset = hashedEnd + 2 + unhashedLength
    let left16 = Array(body[offset..<(offset + 2)])
    offset += 2
    let (r, afterR) = Self.mpi(body, at: offset)
    let (s, end) = Self.mpi(body, at: afterR)
    #expect(end == body.count)
    // RFC 9580 §5.2.4: hash the document, the v4 header through the hashed
    // subpackets, then 0x04 0xFF and that length as four octets.
    var hasher = SHA256()
    hasher.update(data: document)
    hasher.update(data: Data(body[0..<hashedEnd]))
    hasher.update(data: Data([0x04, 0xFF, 0, 0, UInt8(hashedEnd >> 8), UInt8(hashedEnd & 0xFF)]))
    let digest = Data(hasher.finalize())
    #expect(Array(digest.prefix(2)) == left16)
    let pad = { (bytes: [UInt8]) in [UInt8](repeating: 0, count: 32 - bytes.count) + bytes }
    let publicKey = try Curve25519.Signing.PublicKey(rawRepresentation: Self.publicPoint(signer))
    #expect(publicKey.isValidSignature(pad(r) + pad(s), for: digest))
    #expect(!publicKey.isValidSignature(pad(r) + pad(s), for: Data(SHA256.hash(data: document + Data("x".utf8)))))
  }

  /// The Ed25519 point of the certificate's key packet (after the 0x40
  /// prefix of a native point), checked against the v4 fingerprint.
  static func publicPoint(_ signer: OpenPGPSignature) throws -> [UInt8] {
    let key = try #require(try packets(try signer.certificate(at: Date(timeIntervalSince1970: 0))).first { $0.tag == 6 })
    #expect(Array(key.body[0..<6]) == [4, 0, 0, 0, 0, 22])
    #expect(Array(key.body[6..<16]) == [9, 0x2B, 0x06, 0x01, 0x04, 0x01, 0xDA, 0x47, 0x0F, 0x01])  // the Ed25519 OID
    let (point, end) = mpi(key.body, at: 16)
    #expect(end == key.body.count && point.count == 33 && point[0] == 0x40)
    let prefixed = [0x99, UInt8(key.body.count >> 8), UInt8(key.body.count & 0xFF)] + key.body
    #expect(Insecure.SHA1.hash(data: prefixed).map { String(format: "%02X", $0) }.joined() == signer.fingerprint)
    return Array(point.dropFirst())
  }

  /// The certificate is key, user ID, self-signature; each header form of
  /// RFC 9580 §4.2.1 is used at its boundary (a user ID of 191, 192, 8383
  /// and 8384 bytes).
  @Test(arguments: [(191, 2), (192, 3), (8383, 3), (8384, 6)])
  func lengthsUseTheirHeaderForm(userIDLength: Int, header: Int) throws {
    let signer = OpenPGPSignature(key: SigningKey(), userID: String(repeating: "a", count: userIDLength))
    let packets = try Self.packets(try signer.certificate(at: Date(timeIntervalSince1970: 1_700_000_000)))
    #expect(packets.map(\.tag) == [6, 13, 2])
    #expect(packets[1].body.count == userIDLength && packets[1].headerLength == header)
    #expect(Array(packets[2].body[0..<4]) == [4, 0x13, 22, 8])  // positive certification
  }

  /// MPIs carry their exact bit count and no leading zero octets: an
  /// Ed25519 R or S that starts with zeros is shortened, not padded.
  @Test func mpisDropLeadingZerosAndCountBits() throws {
    for _ in 0..<64 {
      let signer = OpenPGPSignature(key: SigningKey(), userID: "u")
      let body = try #require(try Self.packets(try signer.detachedSignature(of: Data("d".utf8), at: Date())).first?.body)
      var offset = 6 + Self.be16(body, 4)
      offset += 2 + Self.be16(body, offset) + 2
      for _ in 0..<2 {
        let bits = Self.be16(body, offset)
        let (value, next) = Self.mpi(body, at: offset)
        #expect(value.first != 0 && bits == value.count * 8 - value[0].leadingZeroBitCount)
        offset = next
      }
    }
  }
}
