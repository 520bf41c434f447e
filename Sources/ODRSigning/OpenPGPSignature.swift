public import FoundationEssentials
import Crypto

/// Detached OpenPGP signatures (RFC 9580, version 4 packets, EdDSALegacy
/// over Ed25519, SHA-256) made with an odr signing key, and the matching
/// public certificate, so that `gpgv` or `sqv` — one of them is on every
/// Debian machine, apt verifies its archives with it — can check a file
/// odr signed (the release's SHA256SUMS).
///
/// The certificate is the Ed25519 public key as an OpenPGP primary key
/// (creation time fixed at 0, so its fingerprint depends on the key
/// alone), one user ID and its self-signature.
public struct OpenPGPSignature: Sendable {
  private let key: SigningKey
  private let userID: String

  /// Signs with `key`; the certificate names it `userID`.
  public init(key: SigningKey, userID: String) {
    self.key = key
    self.userID = userID
  }

  /// The public certificate (binary packets: key, user ID, self-signature),
  /// what `gpgv --keyring FILE` and `sqv --keyring FILE` read.
  public func certificate(at time: Date) throws -> Data {
    let uid = Data(userID.utf8)
    var signed = publicKeyHashPrefix
    signed.append(0xB4)
    signed.append(contentsOf: Self.bigEndian(UInt32(uid.count)))
    signed.append(uid)
    // Positive certification of the user ID; the key may certify and sign.
    let selfSignature = try signature(type: 0x13, over: signed, at: time, extraHashed: [Self.subpacket(27, [0x03])])
    return Self.packet(6, publicKeyBody) + Self.packet(13, uid) + selfSignature
  }

  /// A detached signature of `data` (a binary document signature).
  public func detachedSignature(of data: Data, at time: Date) throws -> Data {
    try signature(type: 0x00, over: data, at: time, extraHashed: [])
  }

  /// The v4 fingerprint, as hex (what `gpgv` prints).
  public var fingerprint: String {
    let digits = Array("0123456789ABCDEF")
    return String(fingerprintBytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
  }

  // MARK: - Packets

  /// Version 4, creation time 0, EdDSALegacy (22), the Ed25519 curve OID,
  /// and the public point as an MPI (0x40 prefix: a native point).
  private var publicKeyBody: Data {
    var body = Data([0x04, 0, 0, 0, 0, 22])
    body.append(contentsOf: [0x09, 0x2B, 0x06, 0x01, 0x04, 0x01, 0xDA, 0x47, 0x0F, 0x01])
    body.append(contentsOf: Self.mpi([0x40] + key.verifyingKey.raw))
    return body
  }

  private var publicKeyHashPrefix: Data {
    let body = publicKeyBody
    return Data([0x99]) + Data(Self.bigEndian(UInt16(body.count))) + body
  }

  private var fingerprintBytes: [UInt8] { Array(Insecure.SHA1.hash(data: publicKeyHashPrefix)) }

  private func signature(type: UInt8, over data: Data, at time: Date, extraHashed: [Data]) throws -> Data {
    let seconds = UInt32(clamping: Int(time.timeIntervalSince1970))
    var hashedArea = Self.subpacket(2, Self.bigEndian(seconds)) + Self.subpacket(33, [0x04] + fingerprintBytes)
    for subpacket in extraHashed { hashedArea.append(subpacket) }
    var header = Data([0x04, type, 22, 8])  // v4, type, EdDSALegacy, SHA-256
    header.append(contentsOf: Self.bigEndian(UInt16(hashedArea.count)))
    header.append(hashedArea)
    var trailer = Data([0x04, 0xFF])
    trailer.append(contentsOf: Self.bigEndian(UInt32(header.count)))
    var hasher = SHA256()
    hasher.update(data: data)
    hasher.update(data: header)
    hasher.update(data: trailer)
    let digest = Data(hasher.finalize())
    // EdDSALegacy signs the digest; the signature is R and S as two MPIs.
    let raw = try key.signature(for: digest)
    var body = header
    let unhashedArea = Self.subpacket(16, Array(fingerprintBytes.suffix(8)))  // issuer key ID, for older verifiers
    body.append(contentsOf: Self.bigEndian(UInt16(unhashedArea.count)))
    body.append(unhashedArea)
    body.append(contentsOf: digest.prefix(2))
    body.append(contentsOf: Self.mpi(Array(raw.prefix(32))))
    body.append(contentsOf: Self.mpi(Array(raw.suffix(32))))
    return Self.packet(2, body)
  }

  /// A packet in the current format: tag, length, body.
  private static func packet(_ tag: UInt8, _ body: Data) -> Data {
    var packet = Data([0xC0 | tag])
    switch body.count {
    case ..<192: packet.append(UInt8(body.count))
    case ..<8384:
      let length = body.count - 192
      packet.append(contentsOf: [UInt8(length >> 8 + 192), UInt8(length & 0xFF)])
    default: packet.append(0xFF); packet.append(contentsOf: bigEndian(UInt32(body.count)))
    }
    return packet + body
  }

  /// A signature subpacket (its length fits one octet here).
  private static func subpacket(_ type: UInt8, _ data: [UInt8]) -> Data {
    Data([UInt8(data.count + 1), type] + data)
  }

  /// A multiprecision integer: bit count, then the bytes without leading zeros.
  private static func mpi(_ bytes: [UInt8]) -> [UInt8] {
    let trimmed = Array(bytes.drop { $0 == 0 })
    let bits = trimmed.first.map { trimmed.count * 8 - $0.leadingZeroBitCount } ?? 0
    return bigEndian(UInt16(bits)) + trimmed
  }

  private static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    withUnsafeBytes(of: value.bigEndian) { Array($0) }
  }
}
