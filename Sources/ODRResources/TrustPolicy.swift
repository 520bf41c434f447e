public import FoundationEssentials
public import ODRTrust

/// What a client trusts when it loads a catalog (DESIGN §3.2): keys pinned
/// by the user, plus what earlier accepted catalogs of the bundle said,
/// kept in the state folder (`$XDG_STATE_HOME/odr/<bundle>/trust.json`,
/// outside the cache, so deleting the cache resets nothing).
public struct TrustPolicy: Sendable {
  /// Keys always trusted to sign (`--trust`, `ODR_TRUST`, odr.json
  /// `trust`). With none pinned, the first signed catalog of a bundle pins
  /// its signer (trust on first use).
  public var pinned: Set<VerifyingKey>
  /// The folder holding `odr/<bundle>/trust.json` (default
  /// `$XDG_STATE_HOME`, else `~/.local/state`).
  public var stateHome: URL?
  /// The clock expiry is checked against.
  public var now: @Sendable () -> Date

  public init(pinned: [VerifyingKey] = [], stateHome: URL? = nil, now: @escaping @Sendable () -> Date = { Date() }) {
    self.pinned = Set(pinned)
    self.stateHome = stateHome
    self.now = now
  }
}
