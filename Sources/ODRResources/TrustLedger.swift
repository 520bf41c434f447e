import ODRBase
public import FoundationEssentials
public import ODRTrust
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
    }

    init(signed: Bool = false, roots: [String: Root] = [:], unsignedVersions: [String: Int]? = nil) {
      self.signed = signed
      self.roots = roots
      self.unsignedVersions = unsignedVersions
    }

    enum CodingKeys: String, CodingKey { case format, signed, roots, unsignedVersions, version, signers, signer }

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
      for key in roots.keys where (try? VerifyingKey(key)) == nil {
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
  struct Locations: Codable, Equatable {
    var format = 1
    var bundles: [String: String] = [:]
  }

  public let bundle: String
  let folder: URL
  let trustFile: StateFile<State>
  let locationsFile: StateFile<Locations>

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
  static func checkReadable(for location: URL, stateHome: URL?) throws {
    guard let bound = try Self.locationsFile(stateHome: stateHome).read()?.bundles[location.absoluteString] else { return }
    _ = try TrustLedger(bundle: bound, stateHome: stateHome).state()
  }

  private static func locationsFile(stateHome: URL?) -> StateFile<Locations> {
    let url = (stateHome ?? XDGFolders.ofProcess.stateHome).appending(path: "odr").appending(path: "_locations.json")
    return StateFile(url: url, what: "the bundles bound to catalog locations", reset: "run `odr trust reset --locations`")
  }

  /// Admits `catalog`, whose signature lines by `signedBy` verify (nil:
  /// unsigned), fetched from `location`, or throws an integrity error saying why not; returns
  /// notices for the user (trust on first use). Nothing is recorded when it
  /// is refused.
  func admit(_ catalog: Catalog, signedBy: [VerifyingKey]?, location: URL, policy: TrustPolicy) async throws -> [String] {
    try await locationsFile.update { locations in
      try refuseOtherBundle(at: location, locations?.bundles)
      let notices = try await trustFile.update { state in
        let (next, notices) = try decide(catalog, signedBy: signedBy, origin: location.absoluteString, state: state, policy: policy)
        state = next
        return notices
      }
      if locations?.bundles[location.absoluteString] == nil {
        locations = locations ?? Locations()
        locations!.bundles[location.absoluteString] = bundle
      }
      return notices
    }
  }

  /// Checks a kept catalog again, as it stands now against the current pins
  /// and trust state, without recording anything: a cache can be written by
  /// others (a restored CI cache, a shared runner), so what it holds is
  /// never trusted as it is. Expiry is the caller's business.
  func recheck(_ catalog: Catalog, signedBy: [VerifyingKey]?, location: URL, policy: TrustPolicy) throws {
    try refuseOtherBundle(at: location, try locationsFile.read()?.bundles)
    guard let state = try trustFile.read() else {
      throw ResourceError(.integrity, "The catalog of \(bundle) kept on disk has no trust state beside it (\(trustFile.url.path)); odr does not use a kept catalog it cannot check. Load it online once more.")
    }
    var lenient = policy
    lenient.now = { .distantPast }
    _ = try decide(catalog, signedBy: signedBy, origin: location.absoluteString, state: state, policy: lenient, keeping: true)
  }

  private func refuseOtherBundle(at location: URL, _ bundles: [String: String]?) throws {
    guard let bound = bundles?[location.absoluteString], bound != bundle else { return }
    throw ResourceError(.integrity, "\(location.absoluteString) served catalogs of \(bound) before; now it serves one claiming \(bundle). Refusing: the bundle a location serves is bound to it on first use, so a host cannot switch bundles to reach another bundle's trust. If the location really moved to another bundle, run `odr trust reset \(bound)`.")
  }

  /// The decision alone: the next state, or the reason for refusing.
  /// `keeping`: the catalog is one kept on disk, checked again (its own
  /// version may be re-served; no first use).
  func decide(_ catalog: Catalog, signedBy valid: [VerifyingKey]?, origin: String, state: State?,
              policy: TrustPolicy, keeping: Bool = false) throws -> (State, [String]) {
    let name = "the catalog of \(bundle) (version \(catalog.version))"
    try policy.refuseIfExpired(catalog)
    var next = state ?? State()
    guard let valid else {
      if next.signed {
        throw ResourceError(.integrity, "\(name) is not signed (no catalog.json.sig), but this bundle's catalogs were signed before; refusing a downgrade to unsigned. The publisher must sign it (odr pack --sign).")
      }
      if !policy.pinned.isEmpty {
        throw ResourceError(.integrity, "\(name) is not signed (no catalog.json.sig), but signing keys are pinned (--trust, ODR_TRUST or odr.json); refusing it. The publisher must sign it (odr pack --sign).")
      }
      var versions = next.unsignedVersions ?? [:]
      if let seen = versions[origin], catalog.version < seen { throw rollback(name, below: seen) }
      versions[origin] = max(catalog.version, versions[origin] ?? 0)
      next.unsignedVersions = versions
      return (next, [])
    }
    guard !valid.isEmpty else {
      throw ResourceError(.integrity, "\(name): catalog.json.sig does not verify; catalog.json or its signature was changed after signing. Nothing was changed here.")
    }
    // The chain is checked once, whatever root (or first use) follows it.
    let chain = catalog.handovers ?? []
    do { try Handover.verify(chain, bundle: bundle, upTo: catalog.version) } catch let error as TrustError {
      throw ResourceError(.integrity, "\(name): \(error.message) Nothing was changed here.")
    }
    let listed = Set(catalog.signers ?? [])
    // The roots that count: exactly the pins (a pinned key is trusted
    // itself), else every root remembered (through what it handed over).
    let pinned = !policy.pinned.isEmpty
    let roots: [(key: VerifyingKey, record: State.Root?)] = pinned
      ? policy.pinned.sorted { $0.description < $1.description }.map { ($0, next.roots[$0.description]) }
      : try next.roots.sorted { $0.key < $1.key }.map { (try VerifyingKey($0.key), $0.value) }
    var notices: [String] = []
    if roots.isEmpty {
      guard !keeping else {
        throw ResourceError(.integrity, "\(name), kept on disk, was accepted under keys that are no longer pinned; refusing it. Load it online with the current pins.")
      }
      guard policy.allowsFirstUse else {
        throw ResourceError(.integrity, "\(name) is signed by \(valid.map(\.description).joined(separator: ", ")), but no key is pinned and CI=true: odr does not trust on first use in CI (a runner keeps no state, so every run would trust whatever is served). Pin the publisher's key with ODR_TRUST (or --trust, or \"trust\" in odr.json), or pass --trust-on-first-use.")
      }
      // Trust on first use: only a key the catalog itself lists.
      guard let first = valid.first(where: listed.contains) else {
        throw ResourceError(.integrity, "\(name) is signed by \(valid.map(\.description).joined(separator: ", ")), which the catalog does not list in its signers; refusing it on first use (a host can add a signature line of its own). Pin the publisher's key with --trust (or ODR_TRUST).")
      }
      next.roots[first.description] = .init(firstUse: true, version: catalog.version, signers: Array(listed), signer: first)
      next.signed = true
      notices.append("trusting \(first) for \(bundle) on first use; pin it with --trust \(first) (or ODR_TRUST) to be sure.")
      return (next, notices)
    }
    var accepted = false
    for (root, record) in roots {
      var start: Set<VerifyingKey> = pinned ? [root] : []
      if let record {
        start.formUnion(record.signers)
        if catalog.version == record.version { start.insert(record.signer) }
      }
      // The chain the catalog carries leads from what this root trusts to
      // its signer: how a client that keeps no state follows a rotation.
      let trusted = Handover.reach(chain, from: start)
      guard let signer = valid.first(where: trusted.contains) else { continue }
      if let record, catalog.version < record.version { throw rollback(name, below: record.version) }
      let signers = listed.isEmpty ? [signer] : catalog.signers!
      next.roots[root.description] = .init(firstUse: record?.firstUse ?? false, version: catalog.version, signers: signers, signer: signer)
      accepted = true
    }
    guard accepted else {
      let trusted = roots.map(\.key.description).sorted().joined(separator: ", ")
      let why = chain.isEmpty ? "it carries no hand-over chain" : "its hand-over chain does not lead there from them"
      throw ResourceError(.integrity, "\(name) is signed by \(valid.map(\.description).joined(separator: ", ")), which is not trusted for \(bundle): the trust roots are \(trusted), and \(why). A key rotation reaches clients through the chain `odr pack` carries; if the publisher started a new trust root (--new-trust-root), pin the new key with --trust\(policy.pinned.isEmpty ? ", or forget the old one with `odr trust reset \(bundle)`" : " (ODR_TRUST in CI)").")
    }
    next.signed = true
    return (next, notices)
  }

  private func rollback(_ name: String, below seen: Int) -> ResourceError {
    ResourceError(.integrity, "\(name) is older than version \(seen) already accepted on this machine; refusing a rollback. If the publisher really went back, they must publish a version above \(seen).")
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
    let names = (try? FileManager.default.contentsOfDirectory(atPath: odr.path)) ?? []  // no folder: no state yet
    return names.filter { FileIO.kind(of: odr.appending(path: $0).appending(path: "trust.json")) != .missing }.sorted()
  }
}
