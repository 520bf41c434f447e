public import FoundationEssentials
import ODRBase
import Crypto
import Dispatch
import Synchronization

/// A publisher's public signing key: what clients pin (`--trust`) and
/// catalogs list as `signers`. Either Ed25519, written
/// `ed25519:<base64 of 32 bytes>`, or hybrid post-quantum, written
/// `ed25519-mldsa65:<base64 of the Ed25519 key (32 bytes) ‖ the ML-DSA-65
/// key (1,952 bytes)>` (docs/trust.md, "Moving to post-quantum
/// signatures"). A hybrid key's signature is the Ed25519 signature ‖ the
/// ML-DSA-65 one (FIPS 204, pure, empty context), over the same message,
/// and verifies only if both parts do.
public struct VerifyingKey: Sendable, Hashable, Codable, CustomStringConvertible {
  /// The Ed25519 public key.
  package let raw: [UInt8]
  /// The ML-DSA-65 public key of a hybrid key; nil: Ed25519 only.
  package let postQuantumRaw: [UInt8]?

  package static let classicPrefix = "ed25519:"
  package static let hybridPrefix = "ed25519-mldsa65:"
  package static let ed25519SignatureBytes = 64
  package static let mldsa65KeyBytes = 1_952
  package static let mldsa65SignatureBytes = 3_309

  /// Parses `ed25519:<base64>` or `ed25519-mldsa65:<base64>`.
  public init(_ string: String) throws {
    let text = string.trimmed
    let hybrid = text.hasPrefix(Self.hybridPrefix)
    let body = text.dropFirst(hybrid ? Self.hybridPrefix.count : Self.classicPrefix.count)
    guard hybrid || text.hasPrefix(Self.classicPrefix), let bytes = Base64.decodePadded(body),
          bytes.count == 32 + (hybrid ? Self.mldsa65KeyBytes : 0),
          // not a key: the error thrown below
          (dropping(.isTheAnswer) { try Curve25519.Signing.PublicKey(rawRepresentation: bytes[..<32]) }) != nil,
          !hybrid || (dropping(.isTheAnswer) { try MLDSA65.PublicKey(rawRepresentation: bytes[32...]) }) != nil else {
      let advice = KeyText.looksPrivate(text) ? " Give the public key (`odr signing-key public NAME`), never the private one; if that key was pasted into a shared log, rotate it." : ""
      throw TrustError(.invalidKey, "Expected a signing public key (ed25519:<base64> or ed25519-mldsa65:<base64>, as `odr signing-key public NAME` prints it), got \(KeyText.describe(text)).\(advice)")
    }
    raw = Array(bytes[..<32])
    postQuantumRaw = hybrid ? Array(bytes[32...]) : nil
  }

  package init(raw: [UInt8], postQuantumRaw: [UInt8]? = nil) {
    self.raw = raw
    self.postQuantumRaw = postQuantumRaw
  }

  /// True for a hybrid Ed25519 + ML-DSA-65 key.
  public var isPostQuantum: Bool { postQuantumRaw != nil }

  /// The Ed25519 key alone (itself for an Ed25519 key): what a line of the
  /// classic half of a hybrid key would name.
  public var classicHalf: VerifyingKey { VerifyingKey(raw: raw) }

  /// The length of this key's signatures.
  package var signatureBytes: Int { Self.ed25519SignatureBytes + (isPostQuantum ? Self.mldsa65SignatureBytes : 0) }

  /// True when `signature` is this key's signature of `message`: Ed25519,
  /// or for a hybrid key the Ed25519 and the ML-DSA-65 signature, both.
  public func isValidSignature(_ signature: [UInt8], for message: Data) -> Bool {
    guard signature.count == signatureBytes else { return false }
    guard isPostQuantum else { return isValidClassic(signature, for: message) }
    // Each half hashes the whole message (a catalog is up to 4 MiB): for a
    // large one, the two run on two cores.
    guard message.count >= Self.parallelFrom else {
      return isValidClassic(signature, for: message) && isValidPostQuantum(signature, for: message)
    }
    let verified = Atomic<Int>(0)
    DispatchQueue.concurrentPerform(iterations: 2) { half in
      if half == 0 ? isValidClassic(signature, for: message) : isValidPostQuantum(signature, for: message) {
        verified.add(1, ordering: .relaxed)
      }
    }
    return verified.load(ordering: .relaxed) == 2
  }

  /// The message size from which a hybrid signature's halves are checked in parallel.
  private static let parallelFrom = 256 * 1024

  private func isValidClassic(_ signature: [UInt8], for message: Data) -> Bool {
    // not a key: does not verify
    guard let key = dropping(.isTheAnswer, { try Curve25519.Signing.PublicKey(rawRepresentation: raw) }) else { return false }
    return key.isValidSignature(signature[..<64], for: message)
  }

  private func isValidPostQuantum(_ signature: [UInt8], for message: Data) -> Bool {
    // not a key: does not verify
    guard let postQuantumRaw, let key = dropping(.isTheAnswer, { try MLDSA65.PublicKey(rawRepresentation: postQuantumRaw) }) else { return false }
    return key.isValidSignature(signature[64...], for: message)
  }

  /// The `ed25519:<base64>` or `ed25519-mldsa65:<base64>` form.
  public var description: String {
    guard let postQuantumRaw else { return Self.classicPrefix + Data(raw).base64EncodedString() }
    return Self.hybridPrefix + Data(raw + postQuantumRaw).base64EncodedString()
  }

  /// How messages name the key: its text for an Ed25519 key; for a hybrid
  /// key (2,664 characters) its prefix, its first 16 characters and its
  /// last 20 — the start of the Ed25519 half and the end of the ML-DSA-65
  /// half (108 bits of it: no key generation can be ground to match), so a
  /// key that shares either half with another (a forger's twin of the
  /// Ed25519 half) is named differently. `odr trust show` and
  /// `odr signing-key public` print it whole.
  public var shortDescription: String {
    guard isPostQuantum else { return description }
    let text = description
    return String(text.prefix(Self.hybridPrefix.count + 16)) + "…" + text.suffix(20)
  }

  /// ``shortDescription`` of a key's text; the text itself when it is not
  /// a key (what a report or the keyring holds, shown as it is).
  public static func shortDescription(of text: String) -> String {
    (dropping(.isTheAnswer) { try VerifyingKey(text) })?.shortDescription ?? text
  }

  public init(from decoder: any Decoder) throws {
    try self.init(try decoder.singleValueContainer().decode(String.self))
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(description)
  }
}
