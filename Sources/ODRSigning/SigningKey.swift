public import FoundationEssentials
import ODRBase
import Crypto

/// A publisher's private signing key: Ed25519, exported as
/// `ed25519-secret:<base64 of the 32-byte seed>`, or hybrid post-quantum
/// (Ed25519 + ML-DSA-65), exported as `ed25519-mldsa65-secret:<base64 of
/// the Ed25519 seed ‖ the ML-DSA-65 seed, 32 bytes each>` (for a CI secret
/// store, `ODR_SIGNING_KEY`, `--sign-key-file`). Its description never
/// shows it.
public struct SigningKey: Sendable, CustomStringConvertible {
  private let key: Curve25519.Signing.PrivateKey
  private let postQuantum: MLDSA65.PrivateKey?

  private static let classicPrefix = "ed25519-secret:"
  private static let hybridPrefix = "ed25519-mldsa65-secret:"

  /// A new random Ed25519 key.
  public init() {
    key = Curve25519.Signing.PrivateKey()
    postQuantum = nil
  }

  /// A new random key: hybrid Ed25519 + ML-DSA-65 when `postQuantum`.
  public init(postQuantum: Bool) throws {
    key = Curve25519.Signing.PrivateKey()
    self.postQuantum = postQuantum ? try MLDSA65.PrivateKey() : nil
  }

  /// Parses the exported form (surrounding white space ignored).
  public init(_ string: String) throws {
    let text = string.trimmed
    let hybrid = text.hasPrefix(Self.hybridPrefix)
    let body = text.dropFirst(hybrid ? Self.hybridPrefix.count : Self.classicPrefix.count)
    guard hybrid || text.hasPrefix(Self.classicPrefix), let seeds = Base64.decodePadded(body), seeds.count == (hybrid ? 64 : 32),
          // not a key: the error thrown below
          let key = dropping(.isTheAnswer, { try Curve25519.Signing.PrivateKey(rawRepresentation: seeds[..<32]) }) else {
      throw Self.notAKey
    }
    self.key = key
    guard hybrid else { postQuantum = nil; return }
    // not a key: the error thrown below
    guard let postQuantum = dropping(.isTheAnswer, { try MLDSA65.PrivateKey(seedRepresentation: seeds[32...], publicKey: nil) }) else { throw Self.notAKey }
    self.postQuantum = postQuantum
  }

  private static var notAKey: TrustError {
    TrustError(.invalidKey, "This is not an exported signing key (ed25519-secret:<base64> or ed25519-mldsa65-secret:<base64>, as `odr signing-key export NAME` prints it).")
  }

  /// True for a hybrid Ed25519 + ML-DSA-65 key.
  public var isPostQuantum: Bool { postQuantum != nil }

  /// The exported secret form.
  public var secretKeyString: String {
    guard let postQuantum else { return Self.classicPrefix + key.rawRepresentation.base64EncodedString() }
    return Self.hybridPrefix + (key.rawRepresentation + postQuantum.seedRepresentation).base64EncodedString()
  }

  /// The public key clients pin.
  public var verifyingKey: VerifyingKey {
    VerifyingKey(raw: Array(key.publicKey.rawRepresentation), postQuantumRaw: postQuantum.map { Array($0.publicKey.rawRepresentation) })
  }

  /// The Ed25519 key alone (itself for an Ed25519 key): what someone who
  /// can forge Ed25519 (a quantum computer) holds of a hybrid key. For
  /// tests of the no-downgrade rules.
  package var classicHalf: SigningKey {
    // A key's own seed always parses.
    dropping(.cannotFail) { try SigningKey(Self.classicPrefix + key.rawRepresentation.base64EncodedString()) }!
  }

  /// The signature of `message`: Ed25519, or for a hybrid key the Ed25519
  /// signature ‖ the ML-DSA-65 one (pure, empty context).
  public func signature(for message: Data) throws -> [UInt8] {
    let classic = Array(try key.signature(for: message))
    guard let postQuantum else { return classic }
    return classic + Array(try postQuantum.signature(for: message))
  }

  public var description: String { "signing key \(verifyingKey)" }
}
