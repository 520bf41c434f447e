public import FoundationEssentials
import ODRBase
import Crypto

/// A publisher's Ed25519 public key, written `ed25519:<base64 of 32 bytes>`:
/// what clients pin (`--trust`) and catalogs list as `signers`.
public struct VerifyingKey: Sendable, Hashable, Codable, CustomStringConvertible {
  package let raw: [UInt8]

  /// Parses `ed25519:<base64>`.
  public init(_ string: String) throws {
    let text = string.trimmed
    guard text.hasPrefix("ed25519:"), let raw = Base64.decodePadded(text.dropFirst(8)), raw.count == 32,
          // not a key: the error thrown below
          (dropping(.isTheAnswer) { try Curve25519.Signing.PublicKey(rawRepresentation: raw) }) != nil else {
      let advice = KeyText.looksPrivate(text) ? " Give the public key (`odr signing-key public NAME`), never the private one; if that key was pasted into a shared log, rotate it." : ""
      throw TrustError(.invalidKey, "Expected a signing public key (ed25519:<base64>, as `odr signing-key public NAME` prints it), got \(KeyText.describe(text)).\(advice)")
    }
    self.raw = raw
  }

  package init(raw: [UInt8]) {
    self.raw = raw
  }

  /// True when `signature` is this key's Ed25519 signature of `message`.
  public func isValidSignature(_ signature: [UInt8], for message: Data) -> Bool {
    // not a key: does not verify
    guard let key = dropping(.isTheAnswer, { try Curve25519.Signing.PublicKey(rawRepresentation: raw) }) else { return false }
    return key.isValidSignature(signature, for: message)
  }

  /// The `ed25519:<base64>` form.
  public var description: String { "ed25519:" + Data(raw).base64EncodedString() }

  public init(from decoder: any Decoder) throws {
    try self.init(try decoder.singleValueContainer().decode(String.self))
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(description)
  }
}
