/// What a probe of the Secret Service found, step by step (`odr doctor`).
/// Steps after the first failure are left nil.
public struct KeyringProbe: Sendable, Equatable {
  /// The session bus answered.
  public var sessionBus = false
  /// A Secret Service provider answered and opened a session.
  public var provider = false
  /// The program providing the Secret Service and its pid
  /// (`keepassxc (pid 812)`), when the bus and `/proc` tell.
  public var providerProgram: String?
  /// The label of the default collection, when there is one.
  public var defaultCollection: String?
  /// Whether the default collection is locked, once it was found.
  public var locked: Bool?
  /// The first failure, or nil when the keyring is ready to use.
  public var failure: KeyringError?

  /// True when keys can be read and written now.
  public var isReady: Bool { failure == nil && locked == false }

  public static func == (a: KeyringProbe, b: KeyringProbe) -> Bool {
    a.sessionBus == b.sessionBus && a.provider == b.provider && a.defaultCollection == b.defaultCollection
      && a.locked == b.locked && a.failure?.code == b.failure?.code
  }
}
