package import Crypto
import ODRBase
import FoundationEssentials
import ODRSigning

/// An age identity (private key): X25519 (`AGE-SECRET-KEY-1…`), hybrid
/// post-quantum ML-KEM-768 + X25519 (`AGE-SECRET-KEY-PQ-1…`), or an
/// unencrypted OpenSSH ssh-ed25519 or ssh-rsa private key.
///
/// Its description never shows the key: use ``secretKeyString`` on purpose.
public struct AgeIdentity: Sendable, CustomStringConvertible {
  package enum Kind: Sendable {
    case x25519(Curve25519.KeyAgreement.PrivateKey)
    case mlkem768x25519(XWingMLKEM768X25519.PrivateKey, seed: [UInt8])
    /// The SSH key, its X25519 secret (SHA-512 of the seed, first half)
    /// and the file it came from (what `export` gives back).
    case sshEd25519(SSHKey, Curve25519.KeyAgreement.PrivateKey, file: String)
    /// The SSH key, its private exponent and the file it came from.
    case sshRSA(SSHKey, privateExponent: [UInt8], file: String)
  }

  package let kind: Kind

  /// A new random X25519 identity.
  public init() {
    self.init(kind: .x25519(Curve25519.KeyAgreement.PrivateKey()))
  }

  private init(kind: Kind) {
    self.kind = kind
  }

  /// A new random identity: hybrid post-quantum when `postQuantum`.
  public init(postQuantum: Bool) throws {
    guard postQuantum else { self.init(); return }
    try self.init(pqSeed: Age.randomBytes(32))
  }

  private init(pqSeed seed: [UInt8]) throws {
    self.init(kind: .mlkem768x25519(try XWingMLKEM768X25519.PrivateKey(seedRepresentation: seed, publicKey: nil), seed: seed))
  }

  /// Parses one `AGE-SECRET-KEY-1…` or `AGE-SECRET-KEY-PQ-1…` string, or
  /// the text of an OpenSSH private key file.
  public init(_ string: String) throws {
    let text = string.trimmed
    if text.hasPrefix("-----BEGIN") {
      switch try SSHKey.privateKey(text) {
      case (let key, .ed25519(let seed)):
        let scalar = Array(SHA512.hash(data: seed).prefix(32))
        self.init(kind: .sshEd25519(key, try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: scalar), file: text + "\n"))
      case (let key, .rsa(let exponent)):
        self.init(kind: .sshRSA(key, privateExponent: exponent, file: text + "\n"))
      }
      return
    }
    // Upper case, as age requires (its Bech32 keeps the case of the prefix).
    guard text == text.uppercased(), let (hrp, data) = Bech32.decode(text), data.count == 32 else { throw Self.invalid }
    switch hrp {
    case "age-secret-key-":
      // not a key: the error thrown
      guard let key = dropping(.isTheAnswer, { try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: data) }) else { throw Self.invalid }
      self.init(kind: .x25519(key))
    case "age-secret-key-pq-":
      try self.init(pqSeed: data)
    default:
      throw Self.invalid
    }
  }

  private static let invalid = TrustError(.invalidKey, "This is not an age identity (AGE-SECRET-KEY-1… or AGE-SECRET-KEY-PQ-1…, as `odr identity export` or `age-keygen` write it, or an OpenSSH ssh-ed25519 or ssh-rsa private key).")

  /// Every identity in the text of an identity file, read as `age` reads
  /// it: either an OpenSSH private key file, or one `AGE-SECRET-KEY-1…` /
  /// `AGE-SECRET-KEY-PQ-1…` per line, exactly (upper case, not indented; a
  /// CRLF line end is allowed), empty lines and lines starting with `#`
  /// ignored.
  public static func parseFile(_ text: String) throws -> [AgeIdentity] {
    if text.trimmed.hasPrefix("-----BEGIN") { return [try AgeIdentity(text)] }
    var identities: [AgeIdentity] = []
    for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
      if line.isEmpty || line.hasPrefix("#") { continue }
      // not an identity: the error thrown below names the line
      guard line == line.trimmed[...], let identity = dropping(.isTheAnswer, { try AgeIdentity(String(line)) }) else {
        throw TrustError(.invalidKey, "Line \(number + 1) is not an age identity (AGE-SECRET-KEY-1… or AGE-SECRET-KEY-PQ-1…, upper case, at the start of the line); identity files hold one per line, with # comments, as age-keygen writes them.")
      }
      identities.append(identity)
    }
    return identities
  }

  /// Whether this is a hybrid post-quantum (ML-KEM-768 + X25519) identity.
  public var isPostQuantum: Bool { recipient.isPostQuantum }

  /// What kind of identity this is, for people: "X25519",
  /// "post-quantum ML-KEM-768 + X25519", "ssh-ed25519" or "ssh-rsa".
  public var kindName: String {
    switch kind {
    case .x25519: "X25519"
    case .mlkem768x25519: "post-quantum ML-KEM-768 + X25519"
    case .sshEd25519: "ssh-ed25519"
    case .sshRSA: "ssh-rsa"
    }
  }

  /// The recipient that encrypts to this identity.
  public var recipient: AgeRecipient {
    switch kind {
    case .x25519(let key): AgeRecipient(kind: .x25519(Array(key.publicKey.rawRepresentation)))
    case .mlkem768x25519(let key, _): AgeRecipient(kind: .mlkem768x25519(Array(key.publicKey.rawRepresentation)))
    case .sshEd25519(let key, _, _), .sshRSA(let key, _, _): AgeRecipient(kind: .ssh(key))
    }
  }

  /// The secret string, for export: `AGE-SECRET-KEY-1…`,
  /// `AGE-SECRET-KEY-PQ-1…`, or the OpenSSH private key file.
  public var secretKeyString: String {
    switch kind {
    case .x25519(let key): Bech32.encode(hrp: "age-secret-key-", data: Array(key.rawRepresentation)).uppercased()
    case .mlkem768x25519(_, let seed): Bech32.encode(hrp: "age-secret-key-pq-", data: seed).uppercased()
    case .sshEd25519(_, _, let file), .sshRSA(_, _, let file): file
    }
  }

  /// The identity file text `age -i` reads: a comment with the recipient,
  /// then the key (an OpenSSH key file as it is).
  public var fileText: String {
    switch kind {
    case .sshEd25519(_, _, let file), .sshRSA(_, _, let file): file
    case .x25519, .mlkem768x25519: "# public key: \(recipient)\n\(secretKeyString)\n"
    }
  }

  public var description: String { "age identity for \(recipient)" }

  /// The file key in `stanza` when it is addressed to this identity; nil
  /// when it is not (or does not open). The stanza's shape is already
  /// validated. Throws `.ageHeader` for a share that is a low-order point.
  package func unwrap(_ stanza: AgeHeader.Stanza) throws -> [UInt8]? {
    switch (kind, stanza.type) {
    case (.x25519(let key), "X25519"):
      let share = Base64.decodeUnpadded(stanza.arguments[0][...]) ?? []
      let shared = try Self.agree(key, share)
      let salt = share + Array(key.publicKey.rawRepresentation)
      return AgeRecipient.open(stanza.body, with: Age.derive(shared, salt: salt, info: AgeRecipient.x25519Label))
    case (.sshEd25519(let ssh, let key, _), "ssh-ed25519"):
      guard stanza.arguments[0] == ssh.tag else { return nil }
      let share = Base64.decodeUnpadded(stanza.arguments[1][...]) ?? []
      let shared = try AgeRecipient.tweak(try Self.agree(key, share), for: ssh)
      let salt = share + Array(key.publicKey.rawRepresentation)
      return AgeRecipient.open(stanza.body, with: Age.derive(shared, salt: salt, info: AgeRecipient.sshLabel))
    case (.sshRSA(let ssh, let privateExponent, _), "ssh-rsa"):
      guard stanza.arguments[0] == ssh.tag, case .rsa(let modulus, let exponent) = ssh.algorithm else { return nil }
      return try RSAOAEP.decrypt(stanza.body, modulus: modulus, exponent: exponent, privateExponent: privateExponent, label: AgeRecipient.rsaLabel)
    case (.mlkem768x25519(let key, _), "mlkem768x25519"):
      let enc = Base64.decodeUnpadded(stanza.arguments[0][...]) ?? []
      // X-Wing's last 32 bytes are the sender's X25519 share: a low-order
      // one makes the shared secret all zero, which age refuses.
      _ = try Self.agree(Curve25519.KeyAgreement.PrivateKey(), Array(enc.suffix(32)))
      // a stanza this identity cannot open is not for it (age tries the next)
      guard var opener = dropping(.isTheAnswer, { try HPKE.Recipient(privateKey: key, ciphersuite: AgeRecipient.pqSuite,
                                             info: Data(AgeRecipient.pqLabel.utf8), encapsulatedKey: Data(enc)) }),
            let fileKey = dropping(.isTheAnswer, { try opener.open(stanza.body) }) else { return nil }  // does not open: not for this identity
      return Array(fileKey)
    default:
      return nil
    }
  }

  /// X25519 with `share`, refusing the all-zero result of a low-order point.
  private static func agree(_ key: Curve25519.KeyAgreement.PrivateKey, _ share: [UInt8]) throws -> [UInt8] {
    // a stanza this identity cannot open is not for it (age tries the next)
    guard let peer = dropping(.isTheAnswer, { try Curve25519.KeyAgreement.PublicKey(rawRepresentation: share) }),
          let shared = dropping(.isTheAnswer, { try key.sharedSecretFromKeyAgreement(with: peer) }),
          !shared.withUnsafeBytes({ $0.allSatisfy { $0 == 0 } }) else {
      throw AgeHeader.malformed("a stanza's X25519 share is a low-order point")
    }
    return shared.withUnsafeBytes { Array($0) }
  }
}
