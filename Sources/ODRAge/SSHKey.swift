import Crypto
import ODRBase
import FoundationEssentials
import ODRSigning

/// The SSH key forms age reads for its ssh-ed25519 and ssh-rsa recipient
/// types: a public key as an authorized_keys line shows it (`ssh-ed25519
/// AAAA… comment`, the RFC 4253 wire format in base64) and an unencrypted
/// OpenSSH private key file (`-----BEGIN OPENSSH PRIVATE KEY-----`).
package struct SSHKey: Sendable, Hashable {
  package enum Algorithm: Sendable, Hashable {
    case ed25519([UInt8])
    /// Unsigned big-endian integers.
    case rsa(modulus: [UInt8], exponent: [UInt8])
  }

  /// The public key in the SSH wire format: what age hashes for the
  /// stanza's tag (and the ssh-ed25519 tweak).
  package let wire: [UInt8]
  package let algorithm: Algorithm

  package static let ed25519Type = "ssh-ed25519"
  package static let rsaType = "ssh-rsa"
  package static let privateBegin = "-----BEGIN OPENSSH PRIVATE KEY-----"
  package static let privateEnd = "-----END OPENSSH PRIVATE KEY-----"

  /// A public key line: `ssh-ed25519 <base64> [comment]` or `ssh-rsa …`.
  package init(publicLine text: String) throws {
    let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
    guard words.count >= 2, let type = words.first else { throw Self.invalid("expected `ssh-ed25519 AAAA… [comment]`") }
    guard type == Self.ed25519Type || type == Self.rsaType else {
      throw TrustError(.invalidKey, "\(type) keys are not age recipients; use an ssh-ed25519 or ssh-rsa key, or an age1… recipient.")
    }
    guard let wire = Base64.decodePadded(words[1]) else { throw Self.invalid("its key is not canonical base64") }
    try self.init(wire: wire)
  }

  package init(wire: [UInt8]) throws {
    var reader = SSHReader(wire[...])
    let type = try reader.string()
    // a blob of another shape is the error thrown below
    if type == Array(Self.ed25519Type.utf8), let key = dropping(.isTheAnswer, { try reader.string() }), key.count == 32, reader.isAtEnd {
      // as age does (edwards25519's SetBytes): a key off the curve is refused
      guard Field25519.isEdwardsY(Field25519(littleEndian: key)) else { throw Self.invalid("the ssh-ed25519 key is not a point of Ed25519") }
      algorithm = .ed25519(key)
    } else if type == Array(Self.rsaType.utf8), let exponent = dropping(.isTheAnswer, { try reader.integer() }), let modulus = dropping(.isTheAnswer, { try reader.integer() }), reader.isAtEnd {  // another shape: the error below
      // age refuses RSA keys shorter than 2048 bits, and so does odr.
      guard modulus.count >= 256, !exponent.isEmpty else { throw Self.invalid("ssh-rsa keys must have at least 2048 bits") }
      algorithm = .rsa(modulus: modulus, exponent: exponent)
    } else {
      throw Self.invalid("the key is not an ssh-ed25519 or ssh-rsa public key")
    }
    self.wire = wire
  }

  package var type: String {
    if case .ed25519 = algorithm { Self.ed25519Type } else { Self.rsaType }
  }

  /// The `ssh-ed25519 AAAA…` (or `ssh-rsa AAAA…`) form, without a comment.
  package var publicLine: String { "\(type) \(Data(wire).base64EncodedString())" }

  /// age's tag for stanzas to this key: the first 4 bytes of SHA-256 of
  /// the wire form, base64.
  package var tag: String { Base64.unpadded(SHA256.hash(data: wire).prefix(4)) }

  /// The X25519 public key of the same secret: u = (1 + y) / (1 − y).
  package func montgomery() throws -> [UInt8] {
    guard case .ed25519(let ed25519) = algorithm else { throw Self.invalid("the key is not an ssh-ed25519 key") }
    let y = Field25519(littleEndian: ed25519)
    let denominator = Field25519.one - y
    guard !denominator.isZero else { throw Self.invalid("the key is not a usable Ed25519 point") }
    return ((Field25519.one + y) * denominator.inverse).littleEndianBytes
  }

  /// The private half of an SSH key, as an OpenSSH key file holds it.
  package enum Secret: Sendable {
    /// The Ed25519 seed (32 bytes).
    case ed25519(seed: [UInt8])
    /// The RSA private exponent, unsigned big-endian.
    case rsa(exponent: [UInt8])
  }

  /// Parses an unencrypted OpenSSH private key file holding one
  /// ssh-ed25519 or ssh-rsa key: its public key and its secret.
  package static func privateKey(_ text: String) throws -> (key: SSHKey, secret: Secret) {
    let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmed }.filter { !$0.isEmpty }
    guard lines.first == privateBegin, lines.last == privateEnd,
          let body = Data(base64Encoded: lines.dropFirst().dropLast().joined()) else {
      throw TrustError(.invalidKey, "This is not an OpenSSH private key file (-----BEGIN OPENSSH PRIVATE KEY----- … -----END OPENSSH PRIVATE KEY-----).")
    }
    var reader = SSHReader(Array(body)[...])
    guard reader.take(15).map(Array.init) == Array("openssh-key-v1\0".utf8) else { throw invalidPrivate("it has no openssh-key-v1 header") }
    let cipher = try reader.string(), kdf = try reader.string()
    _ = try reader.string()  // KDF options
    guard cipher == Array("none".utf8), kdf == Array("none".utf8) else {
      throw TrustError(.invalidKey, "This OpenSSH private key is protected by a passphrase, which odr cannot ask for. Use an unencrypted copy kept where the identity belongs (`cp KEY k && ssh-keygen -p -N '' -f k`), or an age identity (`odr identity new NAME`).")
    }
    guard try reader.uint32() == 1 else { throw invalidPrivate("it holds more than one key") }
    let key = try SSHKey(wire: try reader.string())
    var secret = SSHReader(try reader.string()[...])
    guard try secret.uint32() == (try secret.uint32()) else { throw invalidPrivate("its check numbers differ") }
    guard try secret.string() == Array(key.type.utf8) else { throw invalidPrivate("its private part is of another type than its public key") }
    switch key.algorithm {
    case .ed25519(let ed25519):
      guard try secret.string() == ed25519 else { throw invalidPrivate("its private part does not match its public key") }
      let pair = try secret.string()
      guard pair.count == 64, Array(pair.suffix(32)) == ed25519 else { throw invalidPrivate("its Ed25519 key is malformed") }
      let seed = Array(pair.prefix(32))
      // not a key: the error thrown below
      guard let signing = dropping(.isTheAnswer, { try Curve25519.Signing.PrivateKey(rawRepresentation: seed) }),
            Array(signing.publicKey.rawRepresentation) == ed25519 else { throw invalidPrivate("its private key does not match its public key") }
      return (key, .ed25519(seed: seed))
    case .rsa(let modulus, let exponent):
      guard try secret.integer() == modulus, try secret.integer() == exponent else {
        throw invalidPrivate("its private part does not match its public key")
      }
      return (key, .rsa(exponent: try secret.integer()))
    }
  }

  private static func invalid(_ what: String) -> TrustError {
    TrustError(.invalidKey, "Expected an ssh-ed25519 or ssh-rsa public key (as in ~/.ssh/id_ed25519.pub): \(what).")
  }

  private static func invalidPrivate(_ what: String) -> TrustError {
    TrustError(.invalidKey, "This OpenSSH private key cannot be read: \(what). odr reads unencrypted ssh-ed25519 and ssh-rsa keys as ssh-keygen writes them.")
  }
}

/// Reads the SSH wire encoding: big-endian uint32 and length-prefixed strings.
package struct SSHReader {
  private var bytes: ArraySlice<UInt8>

  package init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

  package var isAtEnd: Bool { bytes.isEmpty }

  package mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
    guard bytes.count >= count else { return nil }
    defer { bytes = bytes.dropFirst(count) }
    return bytes.prefix(count)
  }

  package mutating func uint32() throws -> UInt32 {
    guard let word = take(4) else { throw TrustError(.invalidKey, "The SSH key is truncated.") }
    return word.reduce(0) { $0 << 8 | UInt32($1) }
  }

  /// An mpint, as an unsigned big-endian integer without leading zeros.
  package mutating func integer() throws -> [UInt8] {
    Array(try string().drop(while: { $0 == 0 }))
  }

  package mutating func string() throws -> [UInt8] {
    let count = try uint32()
    guard let value = take(Int(count)) else { throw TrustError(.invalidKey, "The SSH key is truncated.") }
    return Array(value)
  }
}
