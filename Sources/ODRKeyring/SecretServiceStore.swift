public import FoundationEssentials
import ODRBase

/// A ``SecretStore`` in the desktop keyring, through libsecret and the
/// Secret Service D-Bus API (gnome-keyring, KeePassXC, …).
///
/// Each key is one item with the attributes `service` (the bundle id),
/// `key`, `username` and `account` (the key name) and `xdg:schema`
/// (the generic schema's name), labelled `odr <service> <key>`, stored
/// with no libsecret schema object (`ItemLayout`): the layout `secret-tool` reads and writes, and the one
/// Python's keyring, go-keyring, keytar and Rust's keyring crate look up, so
///
/// ```sh
/// secret-tool lookup service com.example.demo key Weather
/// python3 -c 'import keyring; print(keyring.get_password("com.example.demo", "Weather"))'
/// ```
///
/// both print what `odr set Weather` stored. Items those libraries wrote
/// (`service` + `username` or `account`) are read, listed and deleted as
/// keys of the service; writing a key replaces whichever item holds it, in
/// place, and leaves one.
///
/// Every call runs on one serial thread under a deadline (default 5 s);
/// a hung provider gives `KeyringError.Code.timeout`, never a hang.
public struct SecretServiceStore: SecretStore, BlockingReads {
  public let service: String
  /// How long one keyring call may take before it fails with `.timeout`.
  public let deadline: Duration
  public let stateHome: URL?
  /// Whether a locked collection may be unlocked through the desktop's
  /// prompt (a display to prompt on: `DISPLAY` or `WAYLAND_DISPLAY`).
  public let asksToUnlock: Bool

  /// Whether this process has a display the desktop's unlock prompt can
  /// show on (`DISPLAY` or `WAYLAND_DISPLAY` set): the default of `asksToUnlock`.
  public static var processHasDisplay: Bool { Session.desktopCanPrompt }

  /// Creates a store for `service`. Validates the service name, but does
  /// not touch the bus until the first call. `stateHome`: where its
  /// imports' lock lives (default: this process's XDG state folder);
  /// `asksToUnlock` (default: whether this process has a display).
  public init(service: String, deadline: Duration = .seconds(5), stateHome: URL? = nil,
              asksToUnlock: Bool = SecretServiceStore.processHasDisplay) throws(KeyringError) {
    try KeyringInput.validate(service: service)
    self.service = service
    self.deadline = deadline
    self.stateHome = stateHome
    self.asksToUnlock = asksToUnlock
  }

  public func setValue(_ value: String, for name: String) async throws {
    try KeyringInput.validate(name: name)
    try KeyringInput.validate(value: value, for: name)
    let (service, label) = (service, "odr \(service) \(name)")
    try await Libsecret.shared.perform(deadline: deadline, askingToUnlock: asksToUnlock) { session in
      try session.store(ItemLayout.attributes(service: service, name: name), name: name, service: service, label: label, secret: value)
    }
  }

  public func value(for name: String) async throws -> String {
    try KeyringInput.validate(name: name)
    let service = service
    return try await Libsecret.shared.perform(deadline: deadline, askingToUnlock: asksToUnlock) { session in
      try Self.lookup(name, service: service, in: session)
    }
  }

  /// ``value(for:)`` on the calling thread, which it blocks until the
  /// keyring answers or the deadline passes. For a process whose only work
  /// is this one read (`odr get`): it spares the hops to the concurrency
  /// pool and the keyring thread. Never call it from async code.
  public func valueBlocking(for name: String) throws -> String {
    try KeyringInput.validate(name: name)
    return try Libsecret.shared.performBlocking(deadline: deadline, askingToUnlock: asksToUnlock) { session in
      try Self.lookup(name, service: service, in: session)
    }
  }

  /// ``SecretStore/valueAndJournal(for:)`` in one hop to libsecret's
  /// thread: the key's lookup (a miss checked for a locked collection),
  /// then the journal's, whose miss needs no such check (the key's lookup
  /// already knows whether the collection answers).
  public func valueAndJournal(for name: String) async throws -> (value: String?, journal: String?) {
    try KeyringInput.validate(name: name)
    let service = service
    return try await Libsecret.shared.perform(deadline: deadline, askingToUnlock: asksToUnlock) { session in
      try Self.valueAndJournal(name, service: service, in: session)
    }
  }

  /// ``valueAndJournal(for:)`` on the calling thread (see ``valueBlocking(for:)``).
  public func valueAndJournalBlocking(for name: String) throws -> (value: String?, journal: String?) {
    try KeyringInput.validate(name: name)
    return try Libsecret.shared.performBlocking(deadline: deadline, askingToUnlock: asksToUnlock) { session in
      try Self.valueAndJournal(name, service: service, in: session)
    }
  }

  private static func valueAndJournal(_ name: String, service: String, in session: Session) throws -> (value: String?, journal: String?) {
    let values = try session.values(named: [(name, true), (KeyringInput.journalName, false)], service: service)
    return (values[0], values[1])
  }

  private static func lookup(_ name: String, service: String, in session: Session) throws -> String {
    guard let value = try session.value(named: name, service: service) else { throw KeyringError.notFound(name, service: service) }
    return value
  }

  public func values(for names: Set<String>?) async throws -> [String: String] {
    for name in names ?? [] { try KeyringInput.validate(name: name) }
    // A few names: one lookup each is far cheaper than a search, which
    // builds a D-Bus proxy for every item of the service.
    if let names, names.count <= 8 {
      var result: [String: String] = [:]
      for name in names {
        do { result[name] = try await value(for: name) } catch let error as KeyringError where error.code == .notFound {}
      }
      return result
    }
    return try await valuesAndRecords().filter { names?.contains($0.key) ?? !KeyringInput.isRecord($0.key) }
  }

  public func valuesAndRecords() async throws -> [String: String] {
    let service = service
    return try await Libsecret.shared.perform(deadline: deadline, askingToUnlock: asksToUnlock) { session in
      try Self.keys(session.search(["service": service], loadSecrets: true)).mapValues { $0.secret ?? "" }
    }
  }

  /// The items of a service by the key each holds (`ItemLayout.name(of:)`);
  /// of several holding one key, the most recently modified
  /// (`ItemLayout.preferred(_:)`, modification times unknown here: the
  /// one odr did not write).
  private static func keys(_ items: [Session.FoundItem]) -> [String: Session.FoundItem] {
    var result: [String: Session.FoundItem] = [:]
    for item in items {
      guard let name = ItemLayout.name(of: item.attributes) else { continue }
      if let other = result[name], ItemLayout.preferred([(other.attributes, 0), (item.attributes, 0)]) == 0 { continue }
      result[name] = item
    }
    return result
  }

  @discardableResult
  public func deleteValue(for name: String) async throws -> Bool {
    try KeyringInput.validate(name: name)
    let service = service
    return try await Libsecret.shared.perform(deadline: deadline, askingToUnlock: asksToUnlock) { session in
      try session.delete(named: name, service: service)
    }
  }

  public func names() async throws -> [String] {
    let service = service
    return try await Libsecret.shared.perform(deadline: deadline, askingToUnlock: asksToUnlock) { session in
      Self.names(of: try session.search(["service": service], loadSecrets: false))
    }
  }

  private static func names(of items: [Session.FoundItem]) -> [String] {
    keys(items).keys.filter { !KeyringInput.isRecord($0) }.sorted()
  }

  /// Every service holding API keys in the layout odr writes (items of
  /// the generic schema with a `service` and a key name; odr's private
  /// services and records left out), with how many keys each holds: what
  /// `odr doctor` shows. Attributes only: no secret is read.
  public static func keyCounts(deadline: Duration = .seconds(5)) async throws -> [String: Int] {
    try await Libsecret.shared.perform(deadline: deadline, askingToUnlock: false) { session in
      let items = try session.search([ItemLayout.schemaAttribute: ItemLayout.genericSchema], loadSecrets: false)
      let byService = Dictionary(grouping: items) { $0.attributes["service"] ?? "" }
      return byService.compactMapValues { items in
        let count = names(of: items).count
        return count > 0 ? count : nil
      }.filter { service, _ in dropping(.isTheAnswer, { try KeyringInput.validate(keyService: service) }) != nil }
    }
  }

  /// ``names()`` on the calling thread, which it blocks (for shell
  /// completion, which asks synchronously). Never call it from async code.
  public func namesBlocking() throws -> [String] {
    let attributes = ["service": service]
    return Self.names(of: try Libsecret.shared.performBlocking(deadline: deadline, askingToUnlock: asksToUnlock) { session in
      try session.search(attributes, loadSecrets: false)
    })
  }

  /// Deletes every key of the service (and odr's records), in any layout,
  /// one key per call so that each call has its own deadline: libsecret's
  /// bulk clear of hundreds of items can outlast any single deadline.
  @discardableResult
  public func deleteAll() async throws -> Int {
    let service = service
    let names = try await Libsecret.shared.perform(deadline: deadline, askingToUnlock: asksToUnlock) { session in
      Self.keys(try session.search(["service": service], loadSecrets: false)).keys
    }
    for name in names { try await deleteValue(for: name) }
    return names.filter { !KeyringInput.isRecord($0) }.count
  }

  /// Brings every item of the service to odr's layout (`ItemLayout`):
  /// one item per key, carrying its attributes (a key whose item lacks them
  /// is written again as ``setValue(_:for:)`` writes, with the value it
  /// reads). `odr fetch` and `odr doctor --repair` call it. Returns how
  /// many keys changed.
  @discardableResult
  public func bringToLayout() async throws -> Int {
    let service = service
    return try await Libsecret.shared.perform(deadline: deadline, askingToUnlock: asksToUnlock) { session in
      try session.bringToLayout(service: service)
    }
  }

  /// Probes bus, provider, default collection and its lock state, without
  /// reading or writing any item.
  public static func probe(deadline: Duration = .seconds(5)) async -> KeyringProbe {
    do {
      return try await Libsecret.shared.perform(deadline: deadline) { $0.probe() }
    } catch {
      var probe = KeyringProbe()
      probe.failure = error as? KeyringError ?? KeyringError(.failed, "The probe was cancelled.")
      return probe
    }
  }

  // MARK: Catalog tokens

  /// The attribute that marks an item as a catalog token (odr.json
  /// `"auth"`): the origins it may be sent to, space-separated
  /// (`https://cdn.example.com:443`).
  public static let catalogOriginsAttribute = "odr-catalog-origins"

  /// Stores `value` under `name` as a catalog token for `origins`: the
  /// key's one item carries ``catalogOriginsAttribute`` beside its layout.
  public func setCatalogToken(_ value: String, for name: String, origins: [String]) async throws {
    try KeyringInput.validate(name: name)
    try KeyringInput.validate(value: value, for: name)
    let attributes = ItemLayout.attributes(service: service, name: name, extra: [Self.catalogOriginsAttribute: origins.joined(separator: " ")])
    let (service, label) = (service, "odr \(service) \(name) (catalog token)")
    try await Libsecret.shared.perform(deadline: deadline, askingToUnlock: asksToUnlock) { session in
      try session.store(attributes, name: name, service: service, label: label, secret: value)
    }
  }

  /// The value of `name` when it was stored as a catalog token for
  /// `origin` (``setCatalogToken(_:for:origins:)``, or `secret-tool store`
  /// with the attribute). An item of that name that is not marked for
  /// `origin` is refused with `.reserved`: a repository's odr.json may not
  /// send an arbitrary keyring item to a host of its choosing.
  public func catalogToken(named name: String, origin: String) async throws -> String {
    try KeyringInput.validate(name: name)
    let attributes = attributes(for: name)
    let service = service
    let items = try await Libsecret.shared.perform(deadline: deadline, askingToUnlock: asksToUnlock) { session in
      let found = try session.search(attributes, loadSecrets: true)
      if found.isEmpty { throw session.lockedOr(.notFound(name, service: service), attributes: attributes) }
      return found
    }
    let marked = items.first { item in
      item.attributes[Self.catalogOriginsAttribute]?.split(separator: " ").contains { $0 == origin } == true
    }
    guard let secret = marked?.secret else {
      throw KeyringError(.reserved, "The keyring item '\(name)' of \(service) is not marked as a catalog token for \(origin), so odr.json \"auth\" may not send it there (a repository's odr.json cannot pick keyring items). If it is this catalog's token, store it as one: odr set \(name) --service \(service) --catalog-token-for \(origin)")
    }
    return secret
  }

  private func attributes(for name: String) -> [String: String] {
    ["service": service, "key": name]
  }
}
