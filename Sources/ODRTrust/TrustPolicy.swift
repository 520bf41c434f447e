public import FoundationEssentials
public import ODRCatalog
public import ODRSigning

/// What a client trusts when it loads a catalog (docs/design.md, "The published catalog"): keys pinned
/// by the user, plus what earlier accepted catalogs of the bundle said,
/// kept in the state folder (`$XDG_STATE_HOME/odr/<bundle>/trust.json`,
/// outside the cache, so deleting the cache resets nothing).
public struct TrustPolicy: Sendable {
  /// Keys always trusted to sign (`--trust`, `ODR_TRUST`, odr.json
  /// `trust`). With none pinned, the first signed catalog of a bundle pins
  /// its signer (trust on first use).
  public var pinned: Set<VerifyingKey>
  /// Where ``pinned`` came from (docs/trust.md, "How origins combine").
  public var pinOrigin: TrustDecision.PinOrigin = .library
  /// The folder holding `odr/<bundle>/trust.json` (default
  /// `$XDG_STATE_HOME`, else `~/.local/state`).
  public var stateHome: URL?
  /// Whether, with nothing pinned, the first signed catalog of a bundle may
  /// pin its signer. False in CI (`CI=true`): a runner keeps no state, so
  /// every run would be a first use.
  public var allowsFirstUse = true
  /// The clock expiry is checked against.
  public var now: @Sendable () -> Date

  public init(pinned: [VerifyingKey] = [], stateHome: URL? = nil, now: @escaping @Sendable () -> Date = { Date() }) {
    self.pinned = Set(pinned)
    self.stateHome = stateHome
    self.now = now
  }

  /// The decision for a catalog under this policy and `state`.
  package func decision(_ header: CatalogHeader, signedBy: [VerifyingKey]?, location: String, locationBundle: String?,
                state: TrustLedger.State?) -> TrustDecision {
    TrustDecision(header: header, signedBy: signedBy, pinned: pinned, pinOrigin: pinOrigin, location: location,
                  locationBundle: locationBundle, now: now(), allowsFirstUse: allowsFirstUse, state: state)
  }

  /// Refuses a catalog whose `expires` has passed. A kept catalog
  /// revalidated with a 304 is checked again: a 304 never extends trust
  /// past the date its publisher signed.
  public func refuseIfExpired(_ catalog: Catalog) throws {
    if let expired = TrustDecision.expiry(of: catalog.bundle, version: catalog.version, expires: catalog.expires, now: now()) { throw expired }
  }
}
