public import ODRKeys

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

  /// The hosts the key is bound to (whatever port its entries name), in
  /// ``ProxyHost`` form.
  public var hosts: Set<ProxyHost> { Set((key.metadata.hosts ?? []).compactMap { KeyHost($0).flatMap { ProxyHost($0.name) } }) }
}
