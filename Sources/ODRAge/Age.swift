package import Crypto
package import ODRBase
public import FoundationEssentials
import ODRSigning

/// The age v1 file format (age-encryption.org/v1): what the stock `age`
/// tool reads and writes, with X25519, hybrid post-quantum
/// (mlkem768x25519), ssh-ed25519 and ssh-rsa recipients, and odr's AWS
/// KMS recipients (`odr-awskms` stanzas, made and opened by a key service).
///
/// A random 16-byte file key encrypts the payload in 64 KiB
/// ChaCha20-Poly1305 chunks (STREAM); the file key is wrapped once per
/// recipient; an HMAC over the header binds the stanzas to the file key.
///
/// Decryption failures are classed as age's test vectors class them, each
/// with its own ``TrustError/Code``: `.ageArmor`, `.ageHeader`,
/// `.noIdentity`, `.ageHeaderMAC`, `.agePayload`, and `.agePassphrase` for a
/// file encrypted with a passphrase (odr has no passphrase identities).
public enum Age {
  package static let chunkSize = 64 * 1024
  /// How many AWS KMS stanzas of one file are tried.
  package static let maximumKeyServiceTries = 8

  /// Encrypts `plaintext` to every recipient, with a fresh file key.
  /// Post-quantum recipients may not be mixed with others: the file would
  /// then be only as strong as X25519.
  public static func encrypt(_ plaintext: Data, to recipients: [AgeRecipient]) throws -> Data {
    try checkMix(recipients)
    let fileKey = randomBytes(16)
    return try seal(plaintext, fileKey: fileKey, stanzas: recipients.map { try $0.stanza(wrapping: fileKey) })
  }

  /// Encrypts as ``encrypt(_:to:)`` does, to AWS KMS recipients too: their
  /// stanzas are made by `keyService`, the file key bound to `context`.
  package static func encrypt(_ plaintext: Data, to recipients: [AgeRecipient], keyService: (any KeyWrapService)?,
                              context: [String: String]) async throws -> Data {
    try checkMix(recipients)
    let fileKey = randomBytes(16)
    var stanzas: [AgeHeader.Stanza] = []
    for recipient in recipients { stanzas.append(try await recipient.stanza(wrapping: fileKey, keyService: keyService, context: context)) }
    return try seal(plaintext, fileKey: fileKey, stanzas: stanzas)
  }

  /// Refuses post-quantum age recipients mixed with classic ones; a key
  /// service's recipient joins either kind.
  package static func checkMix(_ recipients: [AgeRecipient]) throws {
    guard !recipients.isEmpty else { throw TrustError(.invalidKey, "Encrypting needs at least one recipient.") }
    let age = recipients.filter { !$0.isKeyService }
    let postQuantum = age.filter(\.isPostQuantum).count
    guard postQuantum == 0 || postQuantum == age.count else {
      throw TrustError(.invalidKey, "\(postQuantum) of the \(age.count) age recipients are post-quantum (age1pq1…) and the others are not: mixing them gives up the post-quantum protection (whoever breaks X25519 later opens the file through a classic stanza). Encrypt to post-quantum recipients only (each reader runs `odr identity new NAME --pq`), or to classic ones only. (An awskms: recipient may join either.)")
    }
  }

  /// The header for `stanzas`, its MAC under `fileKey`, and the payload.
  private static func seal(_ plaintext: Data, fileKey: [UInt8], stanzas: [AgeHeader.Stanza]) throws -> Data {
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
      let box = try ChaChaPoly.seal(bytes[offset..<end], using: key, nonce: chunkNonce(counter, last: end == bytes.count))
      output.append(box.ciphertext)
      output.append(box.tag)
      offset = end
      counter += 1
    } while offset < bytes.count
    return output
  }

  /// Decrypts an age file, binary or ASCII-armored, with the first identity
  /// that is one of its recipients. Nothing is returned unless the whole
  /// payload authenticates.
  public static func decrypt(_ file: Data, identities: [AgeIdentity]) throws -> Data {
    let sealed = try Sealed(file)
    return try sealed.open(fileKey: try unwrap(sealed.header.stanzas, with: identities))
  }

  /// Decrypts as ``decrypt(_:identities:)`` does; when no identity is a
  /// recipient, through `keyService` and its AWS KMS stanzas (bound to
  /// `context`). The key service's own failure (access denied, a disabled
  /// key, another context) is thrown as it is: it says more than "not a
  /// recipient".
  package static func decrypt(_ file: Data, identities: [AgeIdentity], keyService: (any KeyWrapService)?,
                              context: [String: String]) async throws -> Data {
    let sealed = try Sealed(file)
    let stanzas = sealed.header.stanzas
    do { return try sealed.open(fileKey: try unwrap(stanzas, with: identities)) } catch let error as TrustError where error.code == .noIdentity {
      guard let keyService else { throw error }
      var failure: (any Error)?
      // A few keys at most: a header holding thousands of stanzas makes
      // no more calls than a real pack.
      for stanza in stanzas.filter({ $0.type == AgeRecipient.kmsStanzaType }).prefix(maximumKeyServiceTries) {
        do {
          let fileKey = try await keyService.unwrap(stanza.body, key: stanza.arguments[0], context: context)
          guard fileKey.count == 16 else { throw AgeHeader.malformed("an \(stanza.type) stanza wraps \(fileKey.count) bytes, not a 16-byte file key") }
          return try sealed.open(fileKey: fileKey)
        } catch is CancellationError {
          throw CancellationError()
        } catch {
          failure = failure ?? error
        }
      }
      throw failure ?? error
    }
  }

  /// The AWS KMS keys (ARNs) an age file is encrypted to, from its header;
  /// empty when there are none or the header does not parse.
  package static func keyServiceRecipients(of file: Data) -> [String] {
    // not an age file: it names no key
    guard let sealed = dropping(.isTheAnswer, { try Sealed(file) }) else { return [] }
    return sealed.header.stanzas.filter { $0.type == AgeRecipient.kmsStanzaType }.map { $0.arguments[0] }
  }

  /// An age file whose header is parsed and validated, not yet opened.
  private struct Sealed {
    let bytes: [UInt8]
    let header: AgeHeader

    init(_ file: Data) throws {
      var bytes = Array(file)
      if AgeArmor.isArmored(bytes) { bytes = try AgeArmor.decode(bytes) }
      let header = try AgeHeader(parsing: bytes)
      for stanza in header.stanzas { try stanza.validate() }
      if header.stanzas.contains(where: { $0.type == "scrypt" }) {
        guard header.stanzas.count == 1 else {
          throw AgeHeader.malformed("an scrypt (passphrase) stanza must be the only stanza, and this header has \(header.stanzas.count)")
        }
        throw TrustError(.agePassphrase, "This age file is encrypted with a passphrase; odr opens files encrypted to recipients only. Ask the publisher to pack the secrets to your recipient (`odr identity recipient NAME`).")
      }
      guard bytes.count - header.payloadOffset >= 16 else { throw AgeHeader.malformed("the payload nonce is missing or short") }
      (self.bytes, self.header) = (bytes, header)
    }

    /// The payload, once the header's MAC verifies under `fileKey`.
    func open(fileKey: [UInt8]) throws -> Data {
      guard HMAC<SHA256>.isValidAuthenticationCode(header.mac, authenticating: header.macInput,
                                                   using: derive(fileKey, salt: [], info: "header")) else {
        throw TrustError(.ageHeaderMAC, "The age file's header has been changed since it was written (its MAC does not verify).")
      }
      let nonce = Array(bytes[header.payloadOffset..<(header.payloadOffset + 16)])
      return try Age.open(bytes[(header.payloadOffset + 16)...], key: derive(fileKey, salt: nonce, info: "payload"))
    }
  }

  /// Decrypts the STREAM payload: every chunk full but the last, which is
  /// marked final and is empty only when the whole payload is.
  private static func open(_ payload: ArraySlice<UInt8>, key: SymmetricKey) throws -> Data {
    let sealedSize = chunkSize + 16
    guard !payload.isEmpty else { throw payloadFailure("the payload is missing") }
    var plaintext = Data(capacity: payload.count)
    var offset = payload.startIndex
    var counter: UInt64 = 0
    while offset < payload.endIndex {
      let end = min(offset + sealedSize, payload.endIndex)
      let last = end == payload.endIndex
      guard end - offset >= 16 else { throw payloadFailure("the last chunk is truncated") }
      let box = try ChaChaPoly.SealedBox(nonce: chunkNonce(counter, last: last),
                                         ciphertext: payload[offset..<(end - 16)], tag: payload[(end - 16)..<end])
      // a chunk that does not open is the error thrown below
      guard let chunk = dropping(.isTheAnswer, { try ChaChaPoly.open(box, using: key) }) else {
        throw payloadFailure(last ? "chunk \(counter) does not authenticate as the final chunk" : "chunk \(counter) does not authenticate")
      }
      if last && chunk.isEmpty && counter > 0 { throw payloadFailure("the final chunk is empty") }
      plaintext.append(chunk)
      offset = end
      counter += 1
    }
    return plaintext
  }

  private static func payloadFailure(_ what: String) -> TrustError {
    TrustError(.agePayload, "The age file's payload is truncated or has been tampered with: \(what).")
  }

  private static func unwrap(_ stanzas: [AgeHeader.Stanza], with identities: [AgeIdentity]) throws -> [UInt8] {
    for identity in identities {
      for stanza in stanzas {
        if let fileKey = try identity.unwrap(stanza) { return fileKey }
      }
    }
    throw TrustError(.noIdentity, "None of the identities is a recipient of this file.")
  }

  /// HKDF-SHA-256 to a 32-byte key: the header MAC key, the payload key and
  /// every stanza's wrap key.
  package static func derive(_ key: [UInt8], salt: [UInt8], info: String) -> SymmetricKey {
    HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: key), salt: salt, info: Array(info.utf8), outputByteCount: 32)
  }

  private static func chunkNonce(_ counter: UInt64, last: Bool) throws -> ChaChaPoly.Nonce {
    var nonce = [UInt8](repeating: 0, count: 3)
    withUnsafeBytes(of: counter.bigEndian) { nonce += $0 }
    nonce.append(last ? 1 : 0)
    return try ChaChaPoly.Nonce(data: nonce)
  }

  package static func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
  }
}
