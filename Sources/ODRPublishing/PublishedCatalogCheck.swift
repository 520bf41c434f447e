import Crypto
import ODRBase
public import FoundationEssentials
public import ODRCatalog
import ODRAge
import ODRResources
public import ODRTransports
public import ODRSigning

/// `odr verify DIR|URL`: checks a published catalog the way a client will
/// see it, for the publisher's CI and for a schedule against the live host
/// — signature, hand-over chain, expiry margin, and every blob's size and
/// SHA-256.
public struct PublishedCatalogCheck: Sendable {
  /// What was checked.
  public struct Report: Sendable, Encodable {
    public var bundle: String
    public var version: Int
    /// The key whose signature verifies (nil: unsigned).
    @NullWhenAbsent public var signedBy: String?
    /// What the signature file says, in one word: `verified` (by
    /// ``signedBy``), `untrusted` (it verifies, but by ``verifiedBy``, keys
    /// no `--trust` key leads to), `invalid` (it does not verify) or
    /// `absent` (no catalog.json.sig).
    public var signature: Signature
    /// The keys whose signatures verify, trusted or not.
    public var verifiedBy: [String]
    @NullWhenAbsent public var expires: Date?
    /// The keys the catalog allows to sign the next versions.
    public var signers: [String]
    /// Its hand-over chain, oldest first.
    public var chain: [Link]
    public var blobs: Int
    /// The AWS KMS keys (ARNs) each encrypted secrets tag's files are
    /// encrypted to, read from their age headers (other recipients are
    /// public keys the header does not name).
    public var kmsRecipients: [String: [String]] = [:]
    /// Every problem found; empty means the catalog is good.
    public var problems: [String]

    /// The signature's state: see ``signature``.
    public enum Signature: String, Sendable, Encodable { case verified, untrusted, invalid, absent }

    /// One hand-over statement.
    public struct Link: Sendable, Encodable {
      public var version: Int
      public var signedBy: String
      public var signers: [String]
    }
  }

  /// The catalog's `catalog.json` URL.
  public let location: URL
  public let transport: any BlobTransport

  /// Checks the catalog at `location` (a folder, its catalog.json, or a
  /// URL `transport` reads: ODRHTTP's for http(s) and s3).
  public init(location: URL, transport: any BlobTransport = FileTransport()) {
    self.location = location.pathExtension == "json" ? location : location.appending(path: "catalog.json")
    self.transport = transport
  }

  /// Checks the catalog. `trusted`: when not empty, the signature must be
  /// by one of these keys or by a key their hand-over chain leads to.
  /// `minValidity`: the catalog must stay valid at least this long from `now`.
  public func run(trusted: Set<VerifyingKey>, minValidity: Duration, now: Date = Date()) async throws -> Report {
    let bytes = try await transport.data(at: location, limit: Catalog.maxBytes)
    let signatureURL = location.deletingLastPathComponent().appending(path: "catalog.json.sig")
    let signatureBytes = try await transport.dataIfPresent(at: signatureURL, limit: CatalogSignature.maxBytes)
    var problems: [String] = []
    let catalog: Catalog
    let signedBy: [VerifyingKey]?
    do {
      let verified = try ResourceCatalog.verifiedHeader(bytes, signatureBytes, at: location).signedBy
      (catalog, signedBy) = (try Catalog.decode(bytes), verified)
    } catch let error as ResourceError where error.code == .integrity && signatureBytes != nil {
      // Say what the catalog claims, as far as it can be read at all (a
      // catalog that does not even decode: the signature's error is the news).
      guard let claimed = dropping(.isTheAnswer, { try Catalog.decode(bytes) }) else { throw error }
      (catalog, signedBy) = (claimed, [])
      problems.append(error.message)
    }
    var report = Report(bundle: catalog.bundle, version: catalog.version, signedBy: nil,
                        signature: signatureBytes == nil ? .absent : .invalid, verifiedBy: (signedBy ?? []).map(\.description), expires: catalog.expires,
                        signers: (catalog.signers ?? []).map(\.description),
                        chain: (catalog.handovers ?? []).map { .init(version: $0.version, signedBy: $0.signedBy.description, signers: $0.signers.map(\.description)) },
                        blobs: 0, problems: problems)
    if let valid = signedBy, !valid.isEmpty {
      var reachable = trusted
      do { reachable = try Handover.follow(catalog.handovers ?? [], from: trusted, bundle: catalog.bundle, upTo: catalog.version) } catch let error as TrustError {
        report.problems.append(error.message)
      }
      report.signedBy = (trusted.isEmpty ? valid.first : valid.first(where: reachable.contains))?.description
      report.signature = report.signedBy == nil ? .untrusted : .verified
      if report.signedBy == nil {
        report.problems.append("catalog.json is signed by \(valid.map(\.shortDescription).joined(separator: ", ")), neither a key given with --trust nor one their hand-over chain leads to; clients that pin those keys refuse it.")
      }
    } else if signatureBytes == nil {
      report.problems.append("catalog.json is not signed (no catalog.json.sig); clients that pin a key refuse it. Pack with --sign.")
    }
    if let expires = catalog.expires {
      let margin = now.addingTimeInterval(Double(minValidity.components.seconds))
      if expires < margin {
        // A pack encrypts afresh, so a re-pack is another catalog: it needs the next version.
        let resign = "re-sign it with the next version (odr pack --sign … --catalog-version \(catalog.version + 1) --expires 90d)"
        report.problems.append(expires < now ? "the catalog expired on \(expires.formatted(.iso8601)); \(resign)."
                               : "the catalog expires on \(expires.formatted(.iso8601)), within the required validity; \(resign).")
      }
    } else if report.signedBy != nil {
      report.problems.append("the signed catalog has no expiry, so a stale copy could be replayed for ever; re-pack with --sign (it sets one).")
    }
    var seen = Set<String>()
    let blobs = location.deletingLastPathComponent().appending(path: "blobs")
    for (name, tag) in catalog.tags.sorted(by: { $0.key < $1.key }) {
      if tag.secrets && tag.encryption == nil {
        report.problems.append("the secrets tag '\(name)' is published in plaintext; give it recipients and re-pack.")
      }
      for file in tag.files where seen.insert(file.sha256).inserted {
        report.blobs += 1
        let (problem, head) = await check(file, at: blobs.appending(path: file.sha256), keeping: tag.encryption == nil ? 0 : Self.headerLimit)
        if let problem {
          report.problems.append("blobs/\(file.sha256) ('\(file.path)' of \(name)) is \(problem).")
        }
        let keys = Age.keyServiceRecipients(of: head)
        if !keys.isEmpty { report.kmsRecipients[name] = Array(Set(report.kmsRecipients[name, default: []] + keys)).sorted() }
      }
    }
    return report
  }

  /// How much of an encrypted file is kept to read its age header's
  /// recipients (a header of a few hundred stanzas).
  static let headerLimit = 256 << 10

  /// Why the blob at `url` is not `file`'s bytes (nil when it is), and its
  /// first `keeping` bytes.
  private func check(_ file: Catalog.File, at url: URL, keeping: Int) async -> (problem: String?, head: Data) {
    var hasher = SHA256()
    var size: Int64 = 0
    var head = Data()
    do {
      try await transport.stream(url) { chunk in
        size += Int64(chunk.count)
        guard size <= file.size else { throw ResourceError(.integrity, "larger than the catalog says") }
        hasher.update(bufferPointer: chunk)
        if head.count < keeping { head.append(contentsOf: chunk.prefix(keeping - head.count)) }
      }
    } catch let error as ResourceError where error.code == .notFound {
      return ("missing", head)
    } catch let error as ResourceError where error.code == .integrity {
      return ("damaged (\(error.message))", head)
    } catch {
      return ("unreadable (\(error))", head)
    }
    return (size == file.size && FileIO.hex(hasher.finalize()) == file.sha256 ? nil : "damaged (size or SHA-256 differs)", head)
  }
}
