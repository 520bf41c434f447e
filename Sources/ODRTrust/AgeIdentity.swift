import FoundationEssentials
import Crypto

/// An age X25519 identity (private key), written `AGE-SECRET-KEY-1…`.
///
/// Its description never shows the key: use ``secretKeyString`` on purpose.
public struct AgeIdentity: Sendable, CustomStringConvertible {
  let privateKey: Curve25519.KeyAgreement.PrivateKey

  /// A new random identity.
  public init() {
    privateKey = Curve25519.KeyAgreement.PrivateKey()
  }

  /// Parses one `AGE-SECRET-KEY-1…` string.
  public init(_ string: String) throws {
    let text = string.trimmed
    guard let (hrp, data) = Bech32.decode(text), hrp == "age-secret-key-", data.count == 32,
          let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: data) else {
      throw TrustError(.invalidKey, "This is not an age identity (AGE-SECRET-KEY-1…, as `odr identity export` or `age-keygen` write it).")
    }
    privateKey = key
  }

  /// Every identity in the text of an age identity file: one
  /// `AGE-SECRET-KEY-1…` per line; blank lines and `#` comments ignored.
  public static func parseFile(_ text: String) throws -> [AgeIdentity] {
    var identities: [AgeIdentity] = []
    for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let trimmed = line.trimmed
      if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
      do { identities.append(try AgeIdentity(trimmed)) } catch {
        throw TrustError(.invalidKey, "Line \(number + 1) is not an age identity (AGE-SECRET-KEY-1…); identity files hold one per line, with # comments.")
      }
    }
    return identities
  }

  /// The recipient that encrypts to this identity.
  public var recipient: AgeRecipient { AgeRecipient(publicKey: Array(privateKey.publicKey.rawRepresentation)) }

  /// The secret `AGE-SECRET-KEY-1…` string, for export.
  public var secretKeyString: String {
    Bech32.encode(hrp: "age-secret-key-", data: Array(privateKey.rawRepresentation)).uppercased()
  }

  /// The identity file text `age -i` reads: a comment with the recipient,
  /// then the key.
  public var fileText: String { "# public key: \(recipient)\n\(secretKeyString)\n" }

  public var description: String { "age identity for \(recipient)" }
}
