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
  /// More headers the key may go in, each `Name` or `Name: Scheme`
  /// (`["x-api-key", "Authorization: Bearer"]`): SDKs differ in which they send.
  public var headers: [String]?
  /// The key is the password of `Authorization: Basic` (git with the token
  /// in its URL, `curl -u`): for this user, or any user when "".
  public var basic: String?

  /// A header the key may go in, and the scheme before it.
  public struct HeaderPlace: Sendable, Equatable {
    public let name: String
    public let scheme: String?

    /// `Name` or `Name: Scheme`; nil for anything else.
    public init?(_ entry: String) {
      let parts = entry.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
      let name = String(parts[0]), scheme = parts.count == 2 ? String(parts[1].drop { $0 == " " }) : nil
      guard Self.isToken(name), scheme.map(Self.isToken) ?? true else { return nil }
      self.name = name
      self.scheme = scheme
    }

    public init(name: String, scheme: String?) {
      self.name = name
      self.scheme = scheme
    }

    /// An HTTP token (RFC 9110 §5.6.2).
    static func isToken(_ s: String) -> Bool {
      !s.isEmpty && s.utf8.count <= 256 && s.utf8.allSatisfy {
        (0x30...0x39).contains($0) || (0x41...0x5a).contains($0) || (0x61...0x7a).contains($0) || "!#$%&'*+-.^_`|~".utf8.contains($0)
      }
    }
  }

  /// Every header the key may go in: `header` (with `scheme`), then `headers`.
  public var headerPlaces: [HeaderPlace] {
    (header.map { [HeaderPlace(name: $0, scheme: scheme)] } ?? []) + (headers ?? []).compactMap(HeaderPlace.init)
  }
  /// The trust roots (`ed25519:…`) of the catalog the key was imported from
  /// by `odr fetch` ([]: an unsigned catalog); nil for a key stored by hand,
  /// or imported before odr recorded it. A fetch under other roots prunes
  /// keys imported under these (docs/trust.md, "Keys carry their
  /// provenance"). Never part of an APIKeys document.
  public var importedUnder: [String]?
  /// True when the user stored this metadata with `odr set --host …` (a
  /// key of their own, not a catalog's): `odr fetch --prune` never takes
  /// it for an imported key. Never part of an APIKeys document.
  public var setByUser: Bool?
  /// The SHA-256 (hex) of the value the metadata was recorded with: the
  /// metadata belongs to that value, not to whatever item holds the key's
  /// name later (another library's item planted beside odr's is served as a
  /// key stored by hand: no hosts, no provenance). Never part of an APIKeys
  /// document.
  public var valueDigest: String?

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
