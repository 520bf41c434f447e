public import FoundationEssentials
import ODRBase

/// `catalog.json.sig`: detached Ed25519 signatures over the exact bytes of
/// `catalog.json`, one per line, each `ed25519:<public key> <signature>`
/// (both base64). Naming the key lets a client say which key signed.
///
/// Catalogs of format 2 are signed over ``domain`` followed by the bytes
/// (domain separation from hand-over statements, ``Handover``); those of
/// format 1 over the bytes alone. A line verifies in one form only, and the
/// client checks that it is the form of the catalog's format.
public struct CatalogSignature: Sendable {
  /// The largest signature file read.
  public static let maxBytes = 1024
  /// The prefix of what a format-2 catalog signature covers.
  public static let domain = "odr-catalog-v2\n"

  /// Each signature and the key that made it.
  public var entries: [(key: VerifyingKey, signature: [UInt8])]

  /// Signs `catalog` with `key`, over ``domain`` + the bytes (format 2).
  public init(signing catalog: Data, with key: SigningKey) throws {
    entries = [(key.verifyingKey, try key.signature(for: Self.signed(catalog, prefixed: true)))]
  }

  /// Signs `catalog` with `key` over the bytes alone (format 1, for tests
  /// of older catalogs).
  public init(signingUnprefixed catalog: Data, with key: SigningKey) throws {
    entries = [(key.verifyingKey, try key.signature(for: catalog))]
  }

  /// Whether a catalog of format `format` is signed in the prefixed form
  /// (``domain`` + the bytes): the one rule of which form a catalog's
  /// signature must take, for the client, `odr verify` and `odr publish`.
  public static func isPrefixed(format: Int) -> Bool { format >= 2 }

  /// The keys whose signatures of `catalog` verify in the form of its
  /// format, `format` (``isPrefixed(format:)``).
  public func signers(of catalog: Data, format: Int) -> [VerifyingKey] {
    validSigners(of: catalog, prefixed: Self.isPrefixed(format: format))
  }

  /// What a signature of `catalog` covers.
  package static func signed(_ catalog: Data, prefixed: Bool) -> Data {
    prefixed ? Data(domain.utf8) + catalog : catalog
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
      // a line that is not a key and signature is the error thrown below
      guard parts.count == 2, let key = dropping(.isTheAnswer, { try VerifyingKey(String(parts[0])) }),
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

  /// The first key among `trusted` whose signature of `catalog` (in the
  /// form of format 2, `prefixed`, or 1) verifies, or nil when none does.
  public func validSigner(of catalog: Data, among trusted: Set<VerifyingKey>, prefixed: Bool = true) -> VerifyingKey? {
    let message = Self.signed(catalog, prefixed: prefixed)
    return entries.first { trusted.contains($0.key) && $0.key.isValidSignature($0.signature, for: message) }?.key
  }

  /// The keys whose signatures of `catalog` (in the form of format 2,
  /// `prefixed`, or 1) verify, trusted or not.
  public func validSigners(of catalog: Data, prefixed: Bool = true) -> [VerifyingKey] {
    let message = Self.signed(catalog, prefixed: prefixed)
    return entries.filter { $0.key.isValidSignature($0.signature, for: message) }.map(\.key)
  }

  /// The lines that verify `catalog`, in either form (what a publish keeps
  /// of the published signature file as its bridge).
  public func lines(verifying catalog: Data) -> [(key: VerifyingKey, signature: [UInt8])] {
    let forms = [Self.signed(catalog, prefixed: true), catalog]
    return entries.filter { entry in forms.contains { entry.key.isValidSignature(entry.signature, for: $0) } }
  }
}
