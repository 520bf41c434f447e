public import FoundationEssentials

/// `catalog.json.sig`: detached Ed25519 signatures over the exact bytes of
/// `catalog.json`, one per line, each `ed25519:<public key> <signature>`
/// (both base64). Naming the key lets a client say which key signed.
public struct CatalogSignature: Sendable {
  /// The largest signature file read.
  public static let maxBytes = 1024

  /// Each signature and the key that made it.
  public var entries: [(key: VerifyingKey, signature: [UInt8])]

  /// Signs `catalog` with `key`.
  public init(signing catalog: Data, with key: SigningKey) throws {
    entries = [(key.verifyingKey, try key.signature(for: catalog))]
  }

  /// Parses a signature file.
  public init(parsing data: Data) throws {
    guard data.count <= Self.maxBytes else {
      throw TrustError(.badSignature, "catalog.json.sig is larger than \(Self.maxBytes) bytes; it is not a signature file.")
    }
    let text = String(decoding: data, as: UTF8.self)
    entries = []
    for line in text.split(separator: "\n") where !line.isEmpty {
      let parts = line.split(separator: " ")
      guard parts.count == 2, let key = try? VerifyingKey(String(parts[0])),
            let signature = Base64.decodePadded(parts[1]), signature.count == 64 else {
        throw TrustError(.badSignature, "catalog.json.sig is malformed (each line is `ed25519:<key> <signature>`).")
      }
      entries.append((key, signature))
    }
    guard !entries.isEmpty else { throw TrustError(.badSignature, "catalog.json.sig holds no signature.") }
  }

  /// The file's bytes.
  public var encoded: Data {
    Data(entries.map { "\($0.key) \(Data($0.signature).base64EncodedString())\n" }.joined().utf8)
  }

  /// The first key among `trusted` whose signature of `catalog` verifies,
  /// or nil when none does.
  public func validSigner(of catalog: Data, among trusted: Set<VerifyingKey>) -> VerifyingKey? {
    entries.first { trusted.contains($0.key) && $0.key.isValidSignature($0.signature, for: catalog) }?.key
  }

  /// The keys whose signatures of `catalog` verify, trusted or not.
  public func validSigners(of catalog: Data) -> [VerifyingKey] {
    entries.filter { $0.key.isValidSignature($0.signature, for: catalog) }.map(\.key)
  }
}
