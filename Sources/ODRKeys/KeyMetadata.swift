/// How and where a key may be used (the extended APIKeys form, docs/design.md, "APIKeys documents").
/// Every field is optional; an empty metadata means "a plain value".
public struct KeyMetadata: Sendable, Equatable, Codable {
  /// The environment variable name `odr exec` and `odr env` use.
  public var env: String?
  /// The HTTP header the key is sent in, e.g. `X-Api-Key` or `Authorization`.
  public var header: String?
  /// A scheme put before the value in `header`, e.g. `Bearer`.
  public var scheme: String?
  /// The query parameter the key is sent in, e.g. `key`.
  public var query: String?
  /// The hosts the key may be sent to; nil means none is bound.
  public var hosts: [String]?
  /// True lets the key travel over plain `http://` to a host that is not
  /// loopback (nil or false: https only, or http to loopback).
  public var insecure: Bool?
  /// The prefix `odr exec --proxy` keeps in the key's placeholder (when
  /// the value starts with it), instead of the one it reads off the value.
  public var placeholder: String?
  /// The trust roots (`ed25519:…`) of the catalog the key was imported from
  /// by `odr fetch` ([]: an unsigned catalog); nil for a key stored by hand,
  /// or imported before odr recorded it. A fetch under other roots prunes
  /// keys imported under these (docs/trust.md, "Keys carry their
  /// provenance"). Never part of an APIKeys document.
  public var importedUnder: [String]?

  public init(env: String? = nil, header: String? = nil, scheme: String? = nil, query: String? = nil, hosts: [String]? = nil,
              insecure: Bool? = nil) {
    self.env = env
    self.header = header
    self.scheme = scheme
    self.query = query
    self.hosts = hosts
    self.insecure = insecure
  }

  /// True when no field is set.
  public var isEmpty: Bool { self == KeyMetadata() }
}
