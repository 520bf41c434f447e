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
    // Upper case, as age requires (its Bech32 keeps the case of the prefix).
    guard text == text.uppercased(), let (hrp, data) = Bech32.decode(text), hrp == "age-secret-key-", data.count == 32,
          let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: data) else {
      throw TrustError(.invalidKey, "This is not an age identity (AGE-SECRET-KEY-1…, as `odr identity export` or `age-keygen` write it).")
    }
    privateKey = key
  }

  /// Every identity in the text of an age identity file, read as `age`
  /// reads it: one `AGE-SECRET-KEY-1…` per line, exactly (upper case, not
  /// indented; a CRLF line end is allowed); empty lines and lines starting
  /// with `#` ignored.
  public static func parseFile(_ text: String) throws -> [AgeIdentity] {
    var identities: [AgeIdentity] = []
    for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
      if line.isEmpty || line.hasPrefix("#") { continue }
      guard line == line.trimmed[...], let identity = try? AgeIdentity(String(line)) else {
        throw TrustError(.invalidKey, "Line \(number + 1) is not an age identity (AGE-SECRET-KEY-1…, upper case, at the start of the line); identity files hold one per line, with # comments, as age-keygen writes them.")
      }
      identities.append(identity)
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
