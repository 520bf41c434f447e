public import FoundationEssentials
import ODRBase

/// `catalog.json.sig`: detached signatures over the exact bytes of
/// `catalog.json`, one per line, each `<public key> <signature>` (both
/// base64; ``VerifyingKey``): `ed25519:…` lines, and in format 3
/// `ed25519-mldsa65:…` lines whose signature is the Ed25519 one ‖ the
/// ML-DSA-65 one. Naming the key lets a client say which key signed.
///
/// What a line covers depends on the catalog's format: format 1 the bytes
/// alone, format 2 ``domain`` followed by them, format 3 ``postQuantumDomain``
/// followed by them (domain separation from each other and from hand-over
/// statements, ``Handover``). A line verifies in one form only, and the
/// client checks that it is the form of the catalog's format; a hybrid line
/// verifies only in format 3.
public struct CatalogSignature: Sendable {
  /// The largest signature file read: four hybrid lines (7,166 bytes each)
  /// and a few Ed25519 lines (~135 bytes each), no more.
  public static let maxBytes = 30_000
  /// The most lines read: every Ed25519 line may be checked in three forms,
  /// each hashing the whole catalog (up to 4 MiB), so their number is what
  /// bounds the work a host can make a client do.
  public static let maxLines = 8
  /// The prefix of what a format-2 catalog signature covers.
  public static let domain = "odr-catalog-v2\n"
  /// The prefix of what a format-3 catalog signature covers.
  public static let postQuantumDomain = "odr-catalog-v3\n"
  /// The format of a catalog any hybrid key signs (older formats have no
  /// hybrid lines, so a catalog signed only by Ed25519 keys stays format 2).
  public static let postQuantumFormat = 3

  /// Each signature and the key that made it.
  public var entries: [(key: VerifyingKey, signature: [UInt8])]

  /// Signs `catalog`, a catalog of format `format`, with each of `keys`, in
  /// the form of that format.
  public init(signing catalog: Data, with keys: [SigningKey], format: Int) throws {
    let message = Self.signed(catalog, format: format)
    entries = try keys.map { ($0.verifyingKey, try $0.signature(for: message)) }
  }

  /// Signs `catalog` with `key`, in the form of the format `key` gives (``format(signedBy:)``).
  public init(signing catalog: Data, with key: SigningKey) throws {
    try self.init(signing: catalog, with: [key], format: Self.format(signedBy: [key]))
  }

  /// The format of a catalog signed by `keys`: ``postQuantumFormat`` when
  /// any is hybrid, else 2.
  public static func format(signedBy keys: [SigningKey]) -> Int {
    keys.contains(where: \.isPostQuantum) ? postQuantumFormat : 2
  }

  /// The keys whose signatures of `catalog` verify in the form of its
  /// format, `format`: the one rule of which form a catalog's signature
  /// must take, for the client, `odr verify` and `odr publish`.
  public func signers(of catalog: Data, format: Int) -> [VerifyingKey] {
    let message = Self.signed(catalog, format: format)
    return entries.filter { Self.admits($0.key, format: format) && $0.key.isValidSignature($0.signature, for: message) }.map(\.key)
  }

  /// Each line that verifies `catalog`, with the format whose form it
  /// verifies in — checked before anything reads the catalog's bytes, so
  /// the format is not known yet. An Ed25519 line tries format 2, then 3,
  /// then 1 (the common case costs one check); a hybrid line tries 3 only.
  public func verifiedLines(of catalog: Data) -> [(key: VerifyingKey, format: Int)] {
    var messages: [Int: Data] = [:]
    return entries.compactMap { entry in Self.format(verifying: entry, catalog, &messages).map { (entry.key, $0) } }
  }

  /// The format in whose form `entry` verifies `catalog`, or nil.
  private static func format(verifying entry: (key: VerifyingKey, signature: [UInt8]), _ catalog: Data, _ messages: inout [Int: Data]) -> Int? {
    let formats = entry.key.isPostQuantum ? [postQuantumFormat] : [2, postQuantumFormat, 1]
    for format in formats {
      let message = messages[format] ?? signed(catalog, format: format)
      messages[format] = message
      if entry.key.isValidSignature(entry.signature, for: message) { return format }
    }
    return nil
  }

  /// The format whose form a line of a catalog of `format` takes (every
  /// format above 3 reads as 3 here, and is refused by the catalog's reader).
  public static func form(ofFormat format: Int) -> Int { min(max(format, 1), postQuantumFormat) }

  /// Whether a line of `key` may sign a catalog of `format`.
  private static func admits(_ key: VerifyingKey, format: Int) -> Bool {
    !key.isPostQuantum || format >= postQuantumFormat
  }

  /// What a signature of a catalog of `format` covers.
  package static func signed(_ catalog: Data, format: Int) -> Data {
    switch form(ofFormat: format) {
    case 1: catalog
    case 2: Data(domain.utf8) + catalog
    default: Data(postQuantumDomain.utf8) + catalog
    }
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
            let signature = Base64.decodePadded(parts[1]), signature.count == key.signatureBytes else {
        throw TrustError(.badSignature, "catalog.json.sig is malformed (each line is `ed25519:<key> <signature>` or `ed25519-mldsa65:<key> <signature>`).")
      }
      entries.append((key, signature))
      guard entries.count <= Self.maxLines else {
        throw TrustError(.badSignature, "catalog.json.sig holds more than \(Self.maxLines) signature lines; it is not a signature file odr writes.")
      }
    }
    guard !entries.isEmpty else { throw TrustError(.badSignature, "catalog.json.sig holds no signature.") }
  }

  /// Why a file of these lines would be refused by every client (over
  /// ``maxBytes`` or ``maxLines``), or nil.
  public var overBound: String? { Self.overBound(signedBy: entries.map(\.key)) }

  /// Why a file of one line by each of `keys` would be refused by every
  /// client, or nil: what `odr pack` checks before it signs anything (a
  /// line's length is its key's text and its signature's fixed length).
  public static func overBound(signedBy keys: [VerifyingKey]) -> String? {
    let size = keys.reduce(0) { $0 + $1.description.utf8.count + 1 + ($1.signatureBytes + 2) / 3 * 4 + 1 }
    guard size > maxBytes || keys.count > maxLines else { return nil }
    return "\(keys.count) signature line\(keys.count == 1 ? "" : "s") of \(size) bytes, over what clients read (\(maxLines) lines, \(maxBytes) bytes: four post-quantum lines and a few Ed25519 ones)"
  }

  /// The file's bytes.
  public var encoded: Data {
    Data(entries.map { "\($0.key) \(Data($0.signature).base64EncodedString())\n" }.joined().utf8)
  }

  /// The lines that verify `catalog`, in any form (what a publish keeps
  /// of the published signature file as its bridge).
  public func lines(verifying catalog: Data) -> [(key: VerifyingKey, signature: [UInt8])] {
    var messages: [Int: Data] = [:]
    return entries.filter { Self.format(verifying: $0, catalog, &messages) != nil }
  }
}
