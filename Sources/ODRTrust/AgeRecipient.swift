import FoundationEssentials
import Crypto

/// An age X25519 recipient: the public half of an ``AgeIdentity``, written
/// `age1…` (Bech32). Packs of secrets are encrypted to recipients.
public struct AgeRecipient: Sendable, Hashable, CustomStringConvertible {
  /// The X25519 public key.
  let publicKey: [UInt8]

  /// Parses an `age1…` string (surrounding white space ignored).
  public init(_ string: String) throws {
    let text = string.trimmed
    guard let (hrp, data) = Bech32.decode(text), hrp == "age", data.count == 32, text == text.lowercased() else {
      let advice = KeyText.looksPrivate(text) ? " Give the identity's recipient (`odr identity recipient NAME` or `age-keygen -y FILE`), never the identity itself." : ""
      throw TrustError(.invalidKey, "Expected an age recipient (age1… as printed by `odr identity recipient` or `age-keygen -y`), got \(KeyText.describe(text)).\(advice)")
    }
    publicKey = data
  }

  init(publicKey: [UInt8]) {
    self.publicKey = publicKey
  }

  /// The `age1…` form.
  public var description: String { Bech32.encode(hrp: "age", data: publicKey) }
}
