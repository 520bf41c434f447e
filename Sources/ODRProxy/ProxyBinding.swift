public import ODRKeyFormat

/// One key a proxied child may use: its value (which the child never
/// sees), the placeholder it sees instead, and where the key's metadata
/// lets it go (`header` with `scheme`, `query`, `hosts`, `insecure`).
public struct ProxyBinding: Sendable {
  public let key: APIKey
  public let placeholder: Placeholder

  /// `key` with `placeholder`, else a new one shaped like it.
  public init(key: APIKey, placeholder: Placeholder? = nil) {
    self.key = key
    self.placeholder = placeholder ?? Placeholder(for: key)
  }

  /// The entries of the key's `hosts`.
  package var entries: [KeyHost] { (key.metadata.hosts ?? []).compactMap(KeyHost.init) }

  /// The hosts the key is bound to (whatever port its entries name), in
  /// ``ProxyHost`` form; a suffix entry (`.amazonaws.com`) as its domain,
  /// whose subtree is what the run's CA may sign for.
  public var hosts: Set<ProxyHost> { Set(entries.compactMap { ProxyHost($0.name) }) }

  /// Whether one of the key's entries names `host` (whatever the port).
  public func covers(_ host: ProxyHost) -> Bool {
    entries.contains { entry in entry.isSuffix ? host.kind == .name && entry.covers(host.text) : ProxyHost(entry.name) == host }
  }
}
