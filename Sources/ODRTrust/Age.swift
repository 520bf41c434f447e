public import FoundationEssentials
import Crypto

/// The age v1 file format (age-encryption.org/v1) with X25519 recipients:
/// what the stock `age` tool reads and writes.
///
/// A random 16-byte file key encrypts the payload in 64 KiB
/// ChaCha20-Poly1305 chunks (STREAM); the file key is wrapped once per
/// recipient; an HMAC over the header binds the stanzas to the file key.
public enum Age {
  static let chunkSize = 64 * 1024
  static let x25519Label = "age-encryption.org/v1/X25519"

  /// Encrypts `plaintext` to every recipient, with a fresh file key.
  public static func encrypt(_ plaintext: Data, to recipients: [AgeRecipient]) throws -> Data {
    guard !recipients.isEmpty else { throw TrustError(.invalidKey, "Encrypting needs at least one recipient.") }
    let fileKey = randomBytes(16)
    let stanzas = try recipients.map { try wrap(fileKey, to: $0) }
    var header = AgeHeader.encode(stanzas)
    let mac = HMAC<SHA256>.authenticationCode(for: header, using: derive(fileKey, salt: [], info: "header"))
    header += Array((" " + Base64.unpadded(mac) + "\n").utf8)
    let nonce = randomBytes(16)
    var output = Data(header + nonce)
    let key = derive(fileKey, salt: nonce, info: "payload")
    let bytes = Array(plaintext)
    var counter: UInt64 = 0
    var offset = 0
    repeat {
      let end = min(offset + chunkSize, bytes.count)
      let last = end == bytes.count
      let box = try ChaChaPoly.seal(bytes[offset..<end], using: key, nonce: chunkNonce(counter, last: last))
      output.append(box.ciphertext)
      output.append(box.tag)
      offset = end
      counter += 1
    } while offset < bytes.count
    return output
  }

  /// Decrypts an age file with the first identity that is one of its
  /// recipients. Throws `.noIdentity` when none is, `.malformed` when the
  /// file is damaged, truncated or tampered with.
  public static func decrypt(_ file: Data, identities: [AgeIdentity]) throws -> Data {
    let bytes = Array(file)
    let header = try AgeHeader(parsing: bytes)
    let fileKey = try unwrap(header.stanzas, with: identities)
    guard HMAC<SHA256>.isValidAuthenticationCode(header.mac, authenticating: header.macInput,
                                                 using: derive(fileKey, salt: [], info: "header")) else {
      throw TrustError(.malformed, "The age file's header has been tampered with (its MAC does not verify).")
    }
    guard bytes.count - header.payloadOffset >= 16 else { throw AgeHeader.malformed("the payload nonce is missing") }
    let nonce = Array(bytes[header.payloadOffset..<(header.payloadOffset + 16)])
    let key = derive(fileKey, salt: nonce, info: "payload")
    let sealedSize = chunkSize + 16
    var offset = header.payloadOffset + 16
    guard offset < bytes.count else { throw AgeHeader.malformed("the payload is missing") }
    var plaintext = Data(capacity: bytes.count - offset)
    var counter: UInt64 = 0
    while offset < bytes.count {
      let end = min(offset + sealedSize, bytes.count)
      let last = end == bytes.count
      guard end - offset >= 16 else { throw AgeHeader.malformed("the last chunk is truncated") }
      do {
        let box = try ChaChaPoly.SealedBox(nonce: chunkNonce(counter, last: last),
                                           ciphertext: bytes[offset..<(end - 16)], tag: bytes[(end - 16)..<end])
        let chunk = try ChaChaPoly.open(box, using: key)
        if last && chunk.isEmpty && counter > 0 { throw AgeHeader.malformed("the last chunk is empty") }
        plaintext.append(chunk)
      } catch let error as TrustError {
        throw error
      } catch {
        throw TrustError(.malformed, "The age file's payload is truncated or has been tampered with (chunk \(counter) does not authenticate).")
      }
      offset = end
      counter += 1
    }
    return plaintext
  }

  private static func wrap(_ fileKey: [UInt8], to recipient: AgeRecipient) throws -> AgeHeader.Stanza {
    let ephemeral = Curve25519.KeyAgreement.PrivateKey()
    let share = Array(ephemeral.publicKey.rawRepresentation)
    let shared = try ephemeral.sharedSecretFromKeyAgreement(with: .init(rawRepresentation: recipient.publicKey))
    let key = wrapKey(shared, salt: share + recipient.publicKey)
    let box = try ChaChaPoly.seal(fileKey, using: key, nonce: .init(data: [UInt8](repeating: 0, count: 12)))
    return .init(type: "X25519", arguments: [Base64.unpadded(share)], body: Array(box.ciphertext + box.tag))
  }

  private static func unwrap(_ stanzas: [AgeHeader.Stanza], with identities: [AgeIdentity]) throws -> [UInt8] {
    for stanza in stanzas where stanza.type == "X25519" {
      guard stanza.arguments.count == 1, let share = Base64.decodeUnpadded(stanza.arguments[0][...]), share.count == 32,
            stanza.body.count == 32 else {
        throw AgeHeader.malformed("an X25519 stanza is malformed")
      }
      for identity in identities {
        // A low-order share gives an all-zero shared secret: age refuses the
        // file (it is malformed, not merely "not ours"), and so does odr.
        guard let peer = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: share),
              let shared = try? identity.privateKey.sharedSecretFromKeyAgreement(with: peer),
              !shared.withUnsafeBytes({ $0.allSatisfy { $0 == 0 } }) else {
          throw AgeHeader.malformed("an X25519 stanza's share is a low-order point")
        }
        let key = wrapKey(shared, salt: share + identity.recipient.publicKey)
        guard let box = try? ChaChaPoly.SealedBox(nonce: .init(data: [UInt8](repeating: 0, count: 12)),
                                                  ciphertext: stanza.body.prefix(16), tag: stanza.body.suffix(16)),
              let fileKey = try? ChaChaPoly.open(box, using: key) else { continue }
        return Array(fileKey)
      }
    }
    throw TrustError(.noIdentity, "None of the identities is a recipient of this file.")
  }

  private static func wrapKey(_ shared: SharedSecret, salt: [UInt8]) -> SymmetricKey {
    shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: salt, sharedInfo: Array(x25519Label.utf8), outputByteCount: 32)
  }

  private static func derive(_ key: [UInt8], salt: [UInt8], info: String) -> SymmetricKey {
    HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: key), salt: salt, info: Array(info.utf8), outputByteCount: 32)
  }

  private static func chunkNonce(_ counter: UInt64, last: Bool) throws -> ChaChaPoly.Nonce {
    var nonce = [UInt8](repeating: 0, count: 3)
    withUnsafeBytes(of: counter.bigEndian) { nonce += $0 }
    nonce.append(last ? 1 : 0)
    return try ChaChaPoly.Nonce(data: nonce)
  }

  static func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
  }
}
