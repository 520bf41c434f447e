import ODRBase
public import FoundationEssentials
public import ODRCatalog
public import ODRSigning

/// The one trust decision (docs/trust.md, "One decision"): whether a catalog
/// is admitted, from typed inputs only — the catalog's header and the keys
/// whose signature lines verify its raw bytes, the pins with their origin,
/// the location and the bundle it is bound to, the clock, and the state
/// read under the trust lock — and, when it is, the next state. It reads
/// no file and no clock of its own, so the threat model is tested as a
/// table (TrustDecisionTests) and every path (load, kept catalog, offline,
/// mirrors, the library) calls this and nothing else.
public struct TrustDecision: Sendable {
  /// Where the pinned keys came from: it decides how far they reach.
  public enum PinOrigin: Sendable, Equatable {
    /// `--trust` on the command line.
    case flag
    /// `ODR_TRUST`.
    case environment
    /// An app's `trust:` parameter.
    case library
    /// An adopted odr.json (`odr trust adopt`, or the job's own checkout in
    /// CI), which speaks for `bundle` only (nil: the bundle its location is
    /// bound to). Its pins never become roots of, nor widen, a bundle that
    /// already has state.
    case repository(file: String, bundle: String?)
  }

  /// The catalog as read before decoding (never its tags).
  public var header: CatalogHeader
  /// The keys whose signature lines verify the raw bytes; nil: unsigned.
  public var signedBy: [VerifyingKey]?
  /// The pinned keys (empty: none) and where they came from.
  public var pinned: Set<VerifyingKey>
  public var pinOrigin: PinOrigin
  /// The location the catalog was read from, as state keys it (no query).
  public var location: String
  /// The bundle `location` was first seen serving, if any.
  public var locationBundle: String?
  /// The clock expiry is checked against (nil: not checked — a kept
  /// catalog, whose expiry its caller judges).
  public var now: Date?
  /// Whether, with nothing pinned, the first signed catalog may pin its signer.
  public var allowsFirstUse: Bool
  /// The bundle's trust state, read under the trust lock; nil: none.
  public var state: TrustLedger.State?
  /// The catalog is the kept copy, checked again: nothing may be learnt
  /// from it (no first use).
  public var keeping = false

  public init(header: CatalogHeader, signedBy: [VerifyingKey]?, pinned: Set<VerifyingKey> = [], pinOrigin: PinOrigin = .flag,
              location: String, locationBundle: String? = nil, now: Date?, allowsFirstUse: Bool = true,
              state: TrustLedger.State?, keeping: Bool = false) {
    self.header = header
    self.signedBy = signedBy
    self.pinned = pinned
    self.pinOrigin = pinOrigin
    self.location = location
    self.locationBundle = locationBundle
    self.now = now
    self.allowsFirstUse = allowsFirstUse
    self.state = state
    self.keeping = keeping
  }

  /// What was decided: the next state and notices for the user (trust on
  /// first use, pins a repository could not use).
  public struct Admission: Equatable, Sendable {
    public var state: TrustLedger.State
    public var notices: [String]
    /// The trust roots it was admitted through (sorted; empty: unsigned):
    /// what the keys it delivers are imported under.
    public var roots: [String] = []
  }

  /// The refusal of a catalog that expired before `now`, or nil: the one
  /// expiry rule, for a catalog admitted and for one kept and revalidated
  /// (``TrustPolicy/refuseIfExpired(_:)``).
  package static func expiry(of bundle: String, version: Int, expires: Date?, now: Date) -> ResourceError? {
    guard let expires, expires < now else { return nil }
    return ResourceError(.integrity, "The catalog of \(bundle) (version \(version)) expired on \(expires.formatted(.iso8601)); the publisher must re-sign it with the next version (odr pack --sign … --catalog-version \(version + 1) --expires 90d). `--offline` keeps using the last accepted catalog meanwhile.")
  }

  /// Admits the catalog, or throws an `.integrity` ``ResourceError`` saying
  /// why not and what to do.
  public func decide() throws -> Admission {
    let bundle = header.bundle
    let name = "the catalog of \(bundle) (version \(header.version))"
    if let bound = locationBundle, bound != bundle {
      throw ResourceError(.integrity, "\(location) served catalogs of \(bound) before; now it serves one claiming \(bundle). Refusing: the bundle a location serves is bound to it on first use, so a host cannot switch bundles to reach another bundle's trust. If the location really moved to another bundle, run `odr trust reset \(bound)`.")
    }
    if case .repository(let file, let speaksFor?) = pinOrigin, speaksFor != bundle {
      throw ResourceError(.integrity, "\(name) comes through \(file), which speaks for \(speaksFor) only; refusing it. A repository's odr.json can never configure another bundle's catalog. If the file is right, fix its \"bundle\".")
    }
    if let now, let expired = Self.expiry(of: bundle, version: header.version, expires: header.expires, now: now) { throw expired }
    var next = state ?? TrustLedger.State()
    guard let valid = signedBy else {
      if next.signed {
        // A folder on this machine is most often someone trying odr out
        // after a signed demo of the same bundle.
        let trying = location.hasPrefix("file:") ? " Trying it out with a folder of your own? `odr trust reset \(bundle)` forgets the earlier signed catalogs (or pack it with a bundle id of its own: odr pack --bundle)." : ""
        throw ResourceError(.integrity, "\(name) is not signed (no catalog.json.sig), but this bundle's catalogs were signed before; refusing a downgrade to unsigned. The publisher must sign it (odr pack --sign).\(trying)")
      }
      if !pinned.isEmpty {
        throw ResourceError(.integrity, "\(name) is not signed (no catalog.json.sig), but signing keys are pinned (--trust, ODR_TRUST or odr.json); refusing it. The publisher must sign it (odr pack --sign).")
      }
      var versions = next.unsignedVersions ?? [:]
      if let seen = versions[location], header.version < seen { throw rollback(name, below: seen) }
      versions[location] = max(header.version, versions[location] ?? 0)
      next.unsignedVersions = versions
      return Admission(state: next, notices: [])
    }
    guard !valid.isEmpty else {
      throw ResourceError(.integrity, "\(name): catalog.json.sig does not verify; catalog.json or its signature was changed after signing. Nothing was changed here.")
    }
    // The chain is checked once, whatever root (or first use) follows it.
    let chain = header.handovers ?? []
    do { try Handover.verify(chain, bundle: bundle, upTo: header.version) } catch let error as TrustError {
      throw ResourceError(.integrity, "\(name): \(error.message) Nothing was changed here.")
    }
    let listed = Set(header.signers ?? [])
    var notices: [String] = []
    let roots = try self.roots(of: next, notices: &notices)
    if roots.isEmpty {
      guard !keeping else {
        throw ResourceError(.integrity, "\(name), kept on disk, was accepted under keys that are no longer pinned; refusing it. Load it online with the current pins.")
      }
      guard allowsFirstUse else {
        throw ResourceError(.integrity, "\(name) is signed by \(valid.map(\.shortDescription).joined(separator: ", ")), but no key is pinned and CI=true: odr does not trust on first use in CI (a runner keeps no state, so every run would trust whatever is served). Pin the publisher's key with ODR_TRUST (or --trust, or \"trust\" in odr.json), or pass --trust-on-first-use.")
      }
      // Trust on first use: only a key the catalog itself lists.
      guard let first = Self.preferred(valid, among: listed) else {
        throw ResourceError(.integrity, "\(name) is signed by \(valid.map(\.shortDescription).joined(separator: ", ")), which the catalog does not list in its signers; refusing it on first use (a host can add a signature line of its own). Pin the publisher's key with --trust (or ODR_TRUST).")
      }
      next.roots[first.description] = .init(firstUse: true, version: header.version, signers: Array(listed), signer: first, digest: header.digest)
      next.signed = true
      let pin = first.isPostQuantum ? "the key `odr trust show \(bundle)` prints" : first.description
      notices.append("trusting \(first.shortDescription) for \(bundle) on first use; pin it with --trust \(pin) (or ODR_TRUST) to be sure.")
      return Admission(state: next, notices: notices, roots: [first.description])
    }
    // Once a bundle is post-quantum here (a hybrid key pinned, a hybrid
    // root, or a hybrid signer accepted under any root), trust flows
    // through hybrid keys only — whatever else is pinned: no downgrade.
    let postQuantumBundle = pinned.contains(where: \.isPostQuantum)
      || (state?.roots ?? [:]).contains { $0.key.hasPrefix(VerifyingKey.hybridPrefix) || $0.value.signer.isPostQuantum }
    var accepted: [String] = [], downgraded = false
    for (root, record, pin) in roots {
      var start: Set<VerifyingKey> = pin ? [root] : []
      if let record {
        start.formUnion(record.signers)
        // The signer of the accepted version may serve it again — the same
        // catalog, re-signed to extend it, never another one.
        if header.version == record.version { start.insert(record.signer) }
      }
      // The chain the catalog carries leads from what this root trusts to
      // its signer: how a client that keeps no state follows a rotation.
      // Post-quantum, it starts from hybrid keys only: a statement by an
      // Ed25519 key (which a quantum forger can make) leads nowhere, and a
      // hybrid key's statements name hybrid keys only (Handover.verify).
      var trusted = Handover.reach(chain, from: start)
      if postQuantumBundle {
        let reached = trusted
        trusted = Handover.reach(chain, from: start.filter(\.isPostQuantum))
        if valid.contains(where: { reached.contains($0) && !trusted.contains($0) }) { downgraded = true }
      }
      guard let signer = Self.preferred(valid, among: trusted) else { continue }
      if let record {
        if header.version < record.version { throw rollback(name, below: record.version) }
        if header.version == record.version, let digest = record.digest, digest != header.digest {
          throw ResourceError(.integrity, "\(name) differs from the version \(record.version) accepted on this machine in more than its expiry; refusing it. A version once published may only be re-signed to extend it; the publisher must publish a version above \(record.version).")
        }
      }
      let signers = listed.isEmpty ? [signer] : header.signers!
      next.roots[root.description] = .init(firstUse: record?.firstUse ?? false, version: header.version, signers: signers, signer: signer, digest: header.digest)
      accepted.append(root.description)
    }
    guard !accepted.isEmpty else {
      if let half = valid.first(where: { key in !key.isPostQuantum && roots.contains { $0.key.isPostQuantum && $0.key.classicHalf == key } }) {
        throw ResourceError(.integrity, "\(name) is signed only by \(half.shortDescription), the Ed25519 half of a post-quantum key this machine trusts for \(bundle); refusing it. A post-quantum key is satisfied only by its hybrid signature (Ed25519 and ML-DSA-65): a line of the Ed25519 half alone is what a forger with a quantum computer could make. The publisher must sign with the hybrid key (odr pack --sign NAME).")
      }
      if downgraded {
        throw ResourceError(.integrity, "\(name) is signed by \(valid.map(\.shortDescription).joined(separator: ", ")), trusted only through Ed25519 keys (its own Ed25519 signature, or a hand-over an Ed25519 key made), but \(bundle) is signed post-quantum on this machine; refusing a downgrade to Ed25519 alone (a forger with a quantum computer could sign that). If the publisher really left post-quantum signing, forget this machine's record with `odr trust reset \(bundle)`\(pinned.isEmpty ? "" : " and pin the key it signs with now").")
      }
      let trusted = roots.map(\.key.shortDescription).sorted().joined(separator: ", ")
      let why = chain.isEmpty ? "it carries no hand-over chain" : "its hand-over chain does not lead there from them"
      throw ResourceError(.integrity, "\(name) is signed by \(valid.map(\.shortDescription).joined(separator: ", ")), which is not trusted for \(bundle): the trust roots are \(trusted), and \(why). A key rotation reaches clients through the chain `odr pack` carries; if the publisher started a new trust root (--new-trust-root), pin the new key with --trust\(pinned.isEmpty ? ", or forget the old one with `odr trust reset \(bundle)`" : " (ODR_TRUST in CI)").")
    }
    next.signed = true
    return Admission(state: next, notices: notices, roots: accepted.sorted())
  }

  /// The roots that count, each with what it accepted before and whether it
  /// is trusted itself (a pin): exactly the pins (pins narrow), else every
  /// remembered root (through what it handed over). A repository's pins
  /// count for a bundle that already has state only where they are roots
  /// of it already: a cloned repository never adds a root, so it can
  /// neither take over an app's bundle nor widen what it trusts.
  private func roots(of state: TrustLedger.State, notices: inout [String]) throws -> [(key: VerifyingKey, record: TrustLedger.State.Root?, pin: Bool)] {
    guard !pinned.isEmpty else {
      return try state.roots.sorted { $0.key < $1.key }.map { (try VerifyingKey($0.key), $0.value, false) }
    }
    var pins = pinned.sorted { $0.description < $1.description }
    if case .repository(let file, _) = pinOrigin, state.signed || !state.roots.isEmpty {
      let known = pins.filter { state.roots[$0.description] != nil }
      guard !known.isEmpty else {
        throw ResourceError(.integrity, "The catalog of \(header.bundle) comes through \(file), whose \"trust\" names keys this machine does not trust for \(header.bundle); refusing it. A repository's odr.json never adds a trust root to a bundle that already has one (a cloned repository could otherwise take its keys over). If the publisher really changed keys, pin the new one with --trust or ODR_TRUST, or run `odr trust reset \(header.bundle)`.")
      }
      if known.count < pins.count {
        notices.append("warning: \(file) pins keys this machine does not trust for \(header.bundle); only the ones it already trusts count.")
      }
      pins = known
    }
    return pins.map { ($0, state.roots[$0.description], true) }
  }

  /// The signer recorded among `valid` keys in `trusted`: a hybrid one
  /// first, so a catalog signed by an old and a new post-quantum key (the
  /// migration) raises the bundle's floor to post-quantum.
  private static func preferred(_ valid: [VerifyingKey], among trusted: Set<VerifyingKey>) -> VerifyingKey? {
    valid.first { trusted.contains($0) && $0.isPostQuantum } ?? valid.first(where: trusted.contains)
  }

  private func rollback(_ name: String, below seen: Int) -> ResourceError {
    ResourceError(.integrity, "\(name) is older than version \(seen) already accepted on this machine; refusing a rollback. If the publisher really went back, they must publish a version above \(seen).")
  }
}
