import ODRBase
public import FoundationEssentials
package import ODRCatalog
public import ODRSigning
#if canImport(Glibc)
import Glibc
#endif

/// The trust state of one bundle and the rules that admit a catalog
/// (docs/trust.md): signature under a trusted key, rollback protection, no
/// downgrade to unsigned, expiry, rotation through `signers`, and the
/// binding of each location the user chose to the bundle first seen there.
///
/// Trust is anchored in what the user chose, never in what a host, a cache
/// or a repository says:
/// - **Roots.** What a catalog's signers hand over is remembered per trust
///   root: a pinned key, or the key trusted on first use. When keys are
///   pinned, only their roots count (pins narrow), each pin trusted itself;
///   remembered roots count only when nothing is pinned, through the
///   signers they handed over to. A version floor belongs to its root, so a
///   catalog signed by a key some other project trusts cannot raise the
///   floor of this project's root.
/// - **First use** accepts only a signature by a key the catalog itself
///   lists in `signers` (a host cannot add its own signature line).
/// - **Locations.** A location (the catalog URL the user gave) is bound to
///   the bundle first accepted from it; a catalog claiming another bundle
///   from there is refused.
/// - **Fail closed.** Unreadable state is an error naming the file and
///   `odr trust reset`, never a first use.
///
/// Admission reads, decides and records under the files' locks, so two
/// processes cannot both act on the same old state.
public struct TrustLedger: Sendable {
  /// What is remembered of a bundle (`<state>/odr/<bundle>/trust.json`).
  public struct State: Codable, Equatable, Sendable {
    /// The format of this file (2; the first format had none).
    public var format = 2
    /// Once true, unsigned catalogs are refused (no downgrade).
    public var signed: Bool
    /// What each trust root has accepted, by the root's key.
    public var roots: [String: Root]
    /// For unsigned catalogs, the highest version accepted from each
    /// location: anyone may publish an unsigned catalog claiming the
    /// bundle, so one location's versions must not lock out another's.
    public var unsignedVersions: [String: Int]?

    /// What one root (a pinned key, or the key trusted on first use) has
    /// accepted.
    public struct Root: Codable, Equatable, Sendable {
      /// True for a key trusted on first use (false: a pin).
      public var firstUse: Bool
      /// The highest version accepted through this root (its rollback floor).
      public var version: Int
      /// The keys that version allows to sign the next versions.
      public var signers: [VerifyingKey]
      /// The key that signed that version (it may re-serve it).
      public var signer: VerifyingKey
      /// ``CatalogHeader/digest`` of that version: a re-served version
      /// must match it (only `expires` and the signature lines may differ).
      /// nil in state written before odr recorded it.
      public var digest: String?

      public init(firstUse: Bool, version: Int, signers: [VerifyingKey], signer: VerifyingKey, digest: String? = nil) {
        self.firstUse = firstUse
        self.version = version
        self.signers = signers
        self.signer = signer
        self.digest = digest
      }
    }

    public init(signed: Bool = false, roots: [String: Root] = [:], unsignedVersions: [String: Int]? = nil) {
      self.signed = signed
      self.roots = roots
      self.unsignedVersions = unsignedVersions
    }

    package enum CodingKeys: String, CodingKey { case format, signed, roots, unsignedVersions, version, signers, signer }

    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      signed = try container.decode(Bool.self, forKey: .signed)
      unsignedVersions = try container.decodeIfPresent([String: Int].self, forKey: .unsignedVersions)
      guard let format = try container.decodeIfPresent(Int.self, forKey: .format) else {
        // The first format kept one set of signers for the bundle: it becomes
        // the first-use root of the key that signed the last version.
        roots = [:]
        if signed, let signer = try container.decodeIfPresent(VerifyingKey.self, forKey: .signer) {
          roots[signer.description] = Root(firstUse: true, version: try container.decode(Int.self, forKey: .version),
                                           signers: try container.decode([VerifyingKey].self, forKey: .signers), signer: signer)
        }
        return
      }
      guard format == 2 else {
        throw ResourceError(.integrity, "has format \(format), written by a later odr")
      }
      roots = try container.decode([String: Root].self, forKey: .roots)
      // a validity probe: a key that does not parse marks the state damaged below
      for key in roots.keys where dropping(.isTheAnswer, { try VerifyingKey(key) }) == nil {
        throw ResourceError(.integrity, "names a trust root that is not a key")
      }
    }

    public func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(format, forKey: .format)
      try container.encode(signed, forKey: .signed)
      try container.encode(roots, forKey: .roots)
      try container.encodeIfPresent(unsignedVersions, forKey: .unsignedVersions)
    }
  }

  /// Which bundle each location was first seen serving
  /// (`<state>/odr/_locations.json`: no bundle id starts with `_`, so it never meets a bundle's folder).
  package struct Locations: Codable, Equatable {
    package var format = 1
    package var bundles: [String: String] = [:]
  }

  public let bundle: String
  package let folder: URL
  package let trustFile: StateFile<State>
  package let locationsFile: StateFile<Locations>

  public init(bundle: String, stateHome: URL?) {
    self.bundle = bundle
    let odr = (stateHome ?? XDGFolders.ofProcess.stateHome).appending(path: "odr")
    folder = odr.appending(path: bundle)
    trustFile = StateFile(url: folder.appending(path: "trust.json"), what: "the trust state of \(bundle)", reset: "run `odr trust reset \(bundle)`")
    locationsFile = Self.locationsFile(stateHome: stateHome)
  }

  /// The bundle's trust state, nil when none is kept; throws when the file
  /// cannot be read.
  public func state() throws -> State? { try trustFile.read() }

  /// Throws when the state a load from `location` would read is
  /// unreadable (the location bindings, and the trust state of the bundle
  /// the location is bound to): said before anything is fetched.
  package static func checkReadable(for location: URL, stateHome: URL?) throws {
    guard let bound = try Self.locationsFile(stateHome: stateHome).read()?.bundles[location.redacted] else { return }
    _ = try TrustLedger(bundle: bound, stateHome: stateHome).state()
  }

  private static func locationsFile(stateHome: URL?) -> StateFile<Locations> {
    let url = (stateHome ?? XDGFolders.ofProcess.stateHome).appending(path: "odr").appending(path: "_locations.json")
    return StateFile(url: url, what: "the bundles bound to catalog locations", reset: "run `odr trust reset --locations`")
  }

  /// Admits the catalog of `header`, whose signature lines by `signedBy`
  /// verify (nil: unsigned), fetched from `location`, by ``TrustDecision``
  /// under the trust lock, or throws an integrity error saying why not.
  /// `commit` runs inside the lock once the catalog is admitted (it keeps
  /// the catalog), so the state and the kept catalog change together;
  /// nothing is recorded when either refuses. Returns notices for the user.
  package func admit(_ header: CatalogHeader, signedBy: [VerifyingKey]?, location: URL, policy: TrustPolicy,
             commit: () async throws -> Void) async throws -> TrustDecision.Admission {
    try await locationsFile.update { locations in
      let key = location.redacted
      let admission = try await trustFile.update { state in
        let admission = try policy.decision(header, signedBy: signedBy, location: key, locationBundle: locations?.bundles[key], state: state).decide()
        try await commit()
        state = admission.state
        return admission
      }
      if locations?.bundles[key] == nil {
        locations = locations ?? Locations()
        locations!.bundles[key] = bundle
      }
      return admission
    }
  }

  /// Checks a kept catalog again, as it stands now against the current pins
  /// and trust state, without recording anything: a cache can be written by
  /// others (a restored CI cache, a shared runner), so what it holds is
  /// never trusted as it is. Expiry is the caller's business. Returns the
  /// roots it is trusted through.
  package func recheck(_ header: CatalogHeader, signedBy: [VerifyingKey]?, location: URL, policy: TrustPolicy) throws -> [String] {
    let key = location.redacted
    let bound = try locationsFile.read()?.bundles[key]
    guard let state = try trustFile.read() else {
      throw ResourceError(.integrity, "The catalog of \(bundle) kept on disk has no trust state beside it (\(trustFile.url.path)); odr does not use a kept catalog it cannot check. Load it online once more.")
    }
    var decision = policy.decision(header, signedBy: signedBy, location: key, locationBundle: bound, state: state)
    decision.now = nil
    decision.keeping = true
    return try decision.decide().roots
  }

  // MARK: Inspecting and resetting

  /// Forgets the bundle's trust state and the locations bound to it.
  /// Returns true when there was anything to forget.
  public func reset() async throws -> Bool {
    let hadState = FileIO.kind(of: trustFile.url) != .missing
    if hadState, unlink(trustFile.url.path) != 0 { throw FileIO.error("Cannot remove '\(trustFile.url.path)'") }
    guard FileIO.kind(of: locationsFile.url) != .missing else { return hadState }
    let bundle = bundle
    let hadLocations = try await locationsFile.update { locations in
      guard var current = locations else { return false }
      let before = current.bundles.count
      current.bundles = current.bundles.filter { $0.value != bundle }
      locations = current
      return current.bundles.count != before
    }
    return hadState || hadLocations
  }

  /// Forgets every location binding (`odr trust reset --locations`),
  /// including an unreadable file of them.
  public static func resetLocations(stateHome: URL?) throws -> Bool {
    let file = locationsFile(stateHome: stateHome).url
    guard FileIO.kind(of: file) != .missing else { return false }
    guard unlink(file.path) == 0 else { throw FileIO.error("Cannot remove '\(file.path)'") }
    return true
  }

  /// The locations bound to this bundle.
  public func locations() throws -> [String] {
    (try locationsFile.read()?.bundles.filter { $0.value == bundle }.keys.sorted()) ?? []
  }

  /// Every bundle with trust state under `stateHome`.
  public static func bundles(stateHome: URL?) -> [String] {
    let odr = (stateHome ?? XDGFolders.ofProcess.stateHome).appending(path: "odr")
    let names = (dropping(.isTheAnswer) { try FileManager.default.contentsOfDirectory(atPath: odr.path) }) ?? []  // no folder: no state yet
    return names.filter { FileIO.kind(of: odr.appending(path: $0).appending(path: "trust.json")) != .missing }.sorted()
  }
}
