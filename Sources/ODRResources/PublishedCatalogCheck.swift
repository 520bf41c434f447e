public import FoundationEssentials
public import ODRTrust

/// `odr verify DIR`: checks a published catalog folder the way a client
/// will see it, for the publisher's CI — signature, expiry margin, and every
/// blob's size and SHA-256.
public struct PublishedCatalogCheck: Sendable {
  /// What was checked.
  public struct Report: Sendable, Encodable {
    public var bundle: String
    public var version: Int
    /// The key whose signature verifies (nil: unsigned).
    @NullWhenAbsent public var signedBy: String?
    @NullWhenAbsent public var expires: Date?
    public var blobs: Int
    /// Every problem found; empty means the folder is good.
    public var problems: [String]
  }

  public let folder: URL

  public init(folder: URL) {
    self.folder = folder
  }

  /// Checks the folder. `trusted`: when not empty, the signature must be by
  /// one of these keys. `minValidity`: the catalog must stay valid at least
  /// this long from `now`.
  public func run(trusted: Set<VerifyingKey>, minValidity: Duration, now: Date = Date()) throws -> Report {
    let catalogURL = folder.appending(path: "catalog.json")
    let bytes = try FileTransport().dataSync(at: catalogURL, limit: ResourceCatalog.maxCatalogBytes)
    let catalog = try Catalog.decode(bytes)
    var report = Report(bundle: catalog.bundle, version: catalog.version, signedBy: nil, expires: catalog.expires, blobs: 0, problems: [])
    let signatureURL = folder.appending(path: "catalog.json.sig")
    if FileIO.kind(of: signatureURL) == .file {
      do {
        let signature = try CatalogSignature(parsing: try FileTransport().dataSync(at: signatureURL, limit: CatalogSignature.maxBytes))
        let valid = signature.validSigners(of: bytes)
        report.signedBy = (trusted.isEmpty ? valid.first : valid.first(where: trusted.contains))?.description
        if valid.isEmpty {
          report.problems.append("catalog.json.sig does not verify: catalog.json or the signature changed after signing. Re-run odr pack --sign.")
        } else if report.signedBy == nil {
          report.problems.append("catalog.json is signed by \(valid.map(\.description).joined(separator: ", ")), none of the keys given with --trust.")
        }
      } catch let error as TrustError {
        report.problems.append(error.message)
      }
    } else {
      report.problems.append("catalog.json is not signed (no catalog.json.sig); clients that pin a key refuse it. Pack with --sign.")
    }
    if let expires = catalog.expires {
      let margin = now.addingTimeInterval(Double(minValidity.components.seconds))
      if expires < margin {
        report.problems.append(expires < now ? "the catalog expired on \(expires.formatted(.iso8601)); re-sign it (odr pack --sign … --expires 90d)."
                               : "the catalog expires on \(expires.formatted(.iso8601)), within the required validity; re-sign it (odr pack --sign … --expires 90d).")
      }
    } else if report.signedBy != nil {
      report.problems.append("the signed catalog has no expiry, so a stale copy could be replayed for ever; re-pack with --sign (it sets one).")
    }
    var seen = Set<String>()
    for (name, tag) in catalog.tags.sorted(by: { $0.key < $1.key }) {
      if tag.secrets && tag.encryption == nil {
        report.problems.append("the secrets tag '\(name)' is published in plaintext; give it recipients and re-pack.")
      }
      for file in tag.files where seen.insert(file.sha256).inserted {
        report.blobs += 1
        let blob = folder.appending(path: "blobs").appending(path: file.sha256)
        guard FileIO.size(of: blob) == file.size, (try? FileIO.sha256(of: blob).sha256) == file.sha256 else {
          report.problems.append("blobs/\(file.sha256) ('\(file.path)' of \(name)) is \(FileIO.kind(of: blob) == .missing ? "missing" : "damaged (size or SHA-256 differs)").")
          continue
        }
      }
    }
    return report
  }
}
