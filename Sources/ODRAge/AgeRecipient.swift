package import Crypto
package import ODRBase
import FoundationEssentials
import ODRSigning

/// An age recipient: the public half of an ``AgeIdentity``. Packs of
/// secrets are encrypted to recipients. Three kinds, as age defines them:
/// X25519 (`age1…`), hybrid post-quantum ML-KEM-768 + X25519
/// (`age1pq1…`), and SSH keys (`ssh-ed25519 AAAA…`, `ssh-rsa AAAA…`); and
/// odr's own, an AWS KMS key (`awskms:arn:aws:kms:…`), whose stanza
/// (`-> odr-awskms ARN`, the KMS ciphertext as its body) is made and opened
/// by a ``KeyWrapService`` — stock `age` skips it, as it skips any stanza
/// type it does not know.
public struct AgeRecipient: Sendable, Hashable, CustomStringConvertible {
  package enum Kind: Sendable, Hashable {
    case x25519([UInt8])
    case mlkem768x25519([UInt8])
    case ssh(SSHKey)
    case awsKMS(KMSKeyARN)
  }

  package let kind: Kind

  package static let pqLabel = "age-encryption.org/mlkem768x25519"
  package static let x25519Label = "age-encryption.org/v1/X25519"
  package static let sshLabel = "age-encryption.org/v1/ssh-ed25519"
  package static let rsaLabel = "age-encryption.org/v1/ssh-rsa"
  /// The type of an AWS KMS stanza, and the prefix of its recipients.
  package static let kmsStanzaType = "odr-awskms"
  package static let kmsPrefix = "awskms:"
  /// X-Wing (ML-KEM-768 + X25519) with HKDF-SHA-256 and ChaCha20-Poly1305,
  /// as the age spec's mlkem768x25519 stanza uses it.
  package static let pqSuite = HPKE.Ciphersuite(kem: .XWingMLKEM768X25519, kdf: .HKDF_SHA256, aead: .chaChaPoly)

  /// Parses an `age1…`, `age1pq1…`, `ssh-ed25519 AAAA… [comment]`,
  /// `ssh-rsa AAAA… [comment]` or `awskms:ARN` string (surrounding white
  /// space ignored).
  public init(_ string: String) throws {
    let text = string.trimmed
    if text.hasPrefix(Self.kmsPrefix) {
      guard let arn = KMSKeyARN(String(text.dropFirst(Self.kmsPrefix.count))) else {
        throw TrustError(.invalidKey, "Expected an AWS KMS recipient, awskms: and the ARN of a key or alias (awskms:arn:aws:kms:REGION:ACCOUNT:key/ID or …:alias/NAME), got \(KeyText.describe(text)). The ARN names the key's region; a bare key id or alias name is not enough.")
      }
      kind = .awsKMS(arn)
      return
    }
    if text.hasPrefix("ssh-") || text.hasPrefix("ecdsa-") || text.hasPrefix("sk-") {
      kind = .ssh(try SSHKey(publicLine: text))
      return
    }
    guard text == text.lowercased(), let (hrp, data) = Bech32.decode(text) else { throw Self.invalid(text) }
    switch hrp {
    case "age" where data.count == 32:
      kind = .x25519(data)
    // a validity probe: not a key falls to the error below
    case "age1pq" where dropping(.isTheAnswer, { try XWingMLKEM768X25519.PublicKey(rawRepresentation: data) }) != nil:
      kind = .mlkem768x25519(data)
    default:
      throw Self.invalid(text)
    }
  }

  /// The recipients in the text of a recipients file, as age reads it:
  /// one per line, empty lines and `#` comments ignored, and a comment
  /// after an age recipient too (`age1…  # laptop (alice)`). SSH public keys
  /// may be given as authorized_keys lines: options before the key type
  /// are skipped, and the numbers of those lines returned, for a note.
  public static func parseFile(_ text: String) throws -> (recipients: [AgeRecipient], linesWithOptions: [Int]) {
    var recipients: [AgeRecipient] = [], withOptions: [Int] = []
    for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      var line = raw.trimmed
      if line.isEmpty || line.hasPrefix("#") { continue }
      if line.hasPrefix("age1") || line.hasPrefix(Self.kmsPrefix), let comment = line.firstIndex(of: "#"), line[..<comment].last?.isWhitespace == true {
        line = String(line[..<comment]).trimmed
      }
      let words = line.split(separator: " ")
      if let type = words.firstIndex(where: { $0.hasPrefix("ssh-") || $0.hasPrefix("ecdsa-") || $0.hasPrefix("sk-") }), type > 0 {
        withOptions.append(index + 1)
        line = words[type...].joined(separator: " ")
      }
      do { recipients.append(try AgeRecipient(line)) } catch let error as TrustError {
        throw TrustError(error.code, "line \(index + 1): \(error.message)", underlying: error)
      }
    }
    return (recipients, withOptions)
  }

  package init(kind: Kind) {
    self.kind = kind
  }

  private static func invalid(_ text: String) -> TrustError {
    if text.hasPrefix("ed25519:") {
      return TrustError(.invalidKey, "Expected an age recipient (age1…), got an Ed25519 verifying key (ed25519:…): that is a publisher's signing key, which goes to --trust (or ODR_TRUST, odr.json \"trust\"), not a recipient. `odr identity recipient NAME` prints a machine's recipient.")
    }
    if text.hasPrefix("age1"), Bech32.failsOnlyItsChecksum(text) {
      return TrustError(.invalidKey, "The age recipient \(KeyText.describe(text)) has a bad checksum: a character is mistyped, swapped or missing. Copy it again from `odr identity recipient NAME` (or `age-keygen -y FILE`) on the machine it belongs to.")
    }
    let advice = KeyText.looksPrivate(text) ? " Give the identity's recipient (`odr identity recipient NAME` or `age-keygen -y FILE`), never the identity itself." : ""
    return TrustError(.invalidKey, "Expected an age recipient (age1… or age1pq1… as printed by `odr identity recipient` or `age-keygen -y`, or an ssh-ed25519 or ssh-rsa public key), got \(KeyText.describe(text)).\(advice)")
  }

  /// Whether this is a hybrid post-quantum (ML-KEM-768 + X25519) recipient.
  public var isPostQuantum: Bool {
    if case .mlkem768x25519 = kind { true } else { false }
  }

  /// Whether this is a key of a key service (AWS KMS), whose stanza only
  /// the service makes and opens. It may join a pack of either kind: the
  /// service's symmetric keys do not weaken a post-quantum pack.
  public var isKeyService: Bool {
    if case .awsKMS = kind { true } else { false }
  }

  /// The `age1…`, `age1pq1…`, `ssh-ed25519 AAAA…`, `ssh-rsa AAAA…` or `awskms:ARN` form.
  public var description: String {
    switch kind {
    case .awsKMS(let arn): Self.kmsPrefix + arn.description
    case .x25519(let key): Bech32.encode(hrp: "age", data: key)
    case .mlkem768x25519(let key): Bech32.encode(hrp: "age1pq", data: key)
    case .ssh(let key): key.publicLine
    }
  }

  /// The stanza that wraps `fileKey` to this recipient: for a key service's
  /// recipient, through `keyService` with `context`.
  package func stanza(wrapping fileKey: [UInt8], keyService: (any KeyWrapService)?, context: [String: String]) async throws -> AgeHeader.Stanza {
    guard case .awsKMS(let arn) = kind else { return try stanza(wrapping: fileKey) }
    guard let keyService else {
      throw TrustError(.invalidKey, "\(self) is an AWS KMS recipient: encrypting to it needs AWS credentials (kms:Encrypt on the key), and odr found none. Set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or AWS_ROLE_ARN with AWS_WEB_IDENTITY_TOKEN_FILE.")
    }
    let blob = try await keyService.wrap(fileKey, key: arn.description, context: context)
    let stanza = AgeHeader.Stanza(type: Self.kmsStanzaType, arguments: [arn.description], body: blob)
    // what every reader would refuse is refused here, before it is published
    do { try stanza.validate() } catch {
      throw TrustError(.invalidKey, "KMS answered Encrypt for \(arn) with a ciphertext of \(blob.count) bytes, not 1 to 6,144: not a KMS ciphertext. Nothing was written; check AWS_ENDPOINT_URL_KMS.")
    }
    return stanza
  }

  /// The stanza that wraps `fileKey` to this recipient.
  package func stanza(wrapping fileKey: [UInt8]) throws -> AgeHeader.Stanza {
    switch kind {
    case .awsKMS:
      throw TrustError(.invalidKey, "\(self) is an AWS KMS recipient, which only a key service can wrap to; odr pack does so with AWS credentials.")
    case .x25519(let key):
      let (share, shared) = try Self.agree(with: key)
      let wrapKey = Age.derive(shared, salt: share + key, info: Self.x25519Label)
      return .init(type: "X25519", arguments: [Base64.unpadded(share)], body: try Self.seal(fileKey, with: wrapKey))
    case .mlkem768x25519(let key):
      var sender = try HPKE.Sender(recipientKey: XWingMLKEM768X25519.PublicKey(rawRepresentation: key),
                                   ciphersuite: Self.pqSuite, info: Data(Self.pqLabel.utf8))
      let body = try sender.seal(fileKey)
      return .init(type: "mlkem768x25519", arguments: [Base64.unpadded(sender.encapsulatedKey)], body: Array(body))
    case .ssh(let ssh):
      if case .rsa(let modulus, let exponent) = ssh.algorithm {
        let body = try RSAOAEP.encrypt(fileKey, modulus: modulus, exponent: exponent, label: Self.rsaLabel)
        return .init(type: "ssh-rsa", arguments: [ssh.tag], body: body)
      }
      let key = try ssh.montgomery()
      let (share, shared) = try Self.agree(with: key)
      let tweaked = try Self.tweak(shared, for: ssh)
      let wrapKey = Age.derive(tweaked, salt: share + key, info: Self.sshLabel)
      return .init(type: "ssh-ed25519", arguments: [ssh.tag, Base64.unpadded(share)], body: try Self.seal(fileKey, with: wrapKey))
    }
  }

  /// A fresh ephemeral share and its X25519 agreement with `key`.
  private static func agree(with key: [UInt8]) throws -> (share: [UInt8], shared: [UInt8]) {
    let ephemeral = Curve25519.KeyAgreement.PrivateKey()
    let shared = try ephemeral.sharedSecretFromKeyAgreement(with: .init(rawRepresentation: key))
    return (Array(ephemeral.publicKey.rawRepresentation), shared.withUnsafeBytes { Array($0) })
  }

  /// age's ssh-ed25519 tweak: X25519(HKDF(salt: wire key), shared secret),
  /// which binds the wrap to the SSH key, not only its X25519 form.
  package static func tweak(_ shared: [UInt8], for ssh: SSHKey) throws -> [UInt8] {
    let tweak = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: [UInt8]()), salt: ssh.wire,
                                       info: Array(sshLabel.utf8), outputByteCount: 32)
    let scalar = try tweak.withUnsafeBytes { try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: $0) }
    let result = try scalar.sharedSecretFromKeyAgreement(with: .init(rawRepresentation: shared))
    return result.withUnsafeBytes { Array($0) }
  }

  private static func seal(_ fileKey: [UInt8], with key: SymmetricKey) throws -> [UInt8] {
    let box = try ChaChaPoly.seal(fileKey, using: key, nonce: .init(data: [UInt8](repeating: 0, count: 12)))
    return Array(box.ciphertext + box.tag)
  }

  /// Opens a stanza body sealed by ``seal(_:with:)``; nil when the key is not the one.
  package static func open(_ body: [UInt8], with key: SymmetricKey) -> [UInt8]? {
    // a stanza this identity cannot open is not for it (age tries the next)
    guard let box = dropping(.isTheAnswer, { try ChaChaPoly.SealedBox(nonce: .init(data: [UInt8](repeating: 0, count: 12)),
                                              ciphertext: body.prefix(16), tag: body.suffix(16)) }),
          let fileKey = dropping(.isTheAnswer, { try ChaChaPoly.open(box, using: key) }) else { return nil }  // does not open: not for this identity
    return Array(fileKey)
  }
}
