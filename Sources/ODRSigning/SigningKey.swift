public import FoundationEssentials
import ODRBase
import Crypto

/// A publisher's Ed25519 private key. Exported as
/// `ed25519-secret:<base64 of the 32-byte seed>` (for a CI secret store,
/// `ODR_SIGNING_KEY`, `--sign-key-file`); its description never shows it.
public struct SigningKey: Sendable, CustomStringConvertible {
  private let key: Curve25519.Signing.PrivateKey

  /// A new random key.
  public init() {
    key = Curve25519.Signing.PrivateKey()
  }

  /// Parses the exported form (surrounding white space ignored).
  public init(_ string: String) throws {
    let text = string.trimmed
    guard text.hasPrefix("ed25519-secret:"), let seed = Base64.decodePadded(text.dropFirst(15)), seed.count == 32,
          // not a key: the error thrown below
          let key = dropping(.isTheAnswer, { try Curve25519.Signing.PrivateKey(rawRepresentation: seed) }) else {
      throw TrustError(.invalidKey, "This is not an exported signing key (ed25519-secret:<base64>, as `odr signing-key export NAME` prints it).")
    }
    self.key = key
  }

  /// The exported secret form.
  public var secretKeyString: String { "ed25519-secret:" + key.rawRepresentation.base64EncodedString() }

  /// The public key clients pin.
  public var verifyingKey: VerifyingKey { VerifyingKey(raw: Array(key.publicKey.rawRepresentation)) }

  /// The Ed25519 signature of `message`.
  public func signature(for message: Data) throws -> [UInt8] {
    Array(try key.signature(for: message))
  }

  public var description: String { "signing key \(verifyingKey)" }
}
