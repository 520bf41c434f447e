public import FoundationEssentials
public import ODRKeyFormat
public import ODRBase

/// Where one request's key may go (docs/design.md, "APIKeys documents"): only to the origin —
/// scheme, host and port (the scheme's default when absent) — of the URL the
/// caller asked for, and only when that host is one of the key's `hosts`;
/// checked again at every redirect hop; the rule of hosts and ports is
/// `KeyHost.refusal(hosts:insecure:scheme:host:port:)`.
public struct KeyRoute: Sendable, Equatable {
  /// A URL's scheme, host and port (ODRBase's one ``Origin``).
  public typealias Origin = ODRBase.Origin

  /// The origin of the URL the caller asked for.
  public let origin: Origin?

  public init(requested url: URL) {
    origin = Origin(url)
  }

  /// Why `key` must not go to `url`, or nil when it may.
  public func refusal(for key: APIKey, at url: URL) -> String? {
    guard let origin, let here = Origin(url) else { return "the URL has no scheme, host or port" }
    guard here == origin else { return "\(here) is not the origin the request was made to (\(origin))" }
    return KeyHost.refusal(hosts: key.metadata.hosts ?? [], insecure: key.metadata.insecure == true, scheme: here.scheme, host: here.host,
                           port: here.port)
  }
}
