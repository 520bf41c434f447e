public import FoundationEssentials
public import ODRKeys
public import ODRBase

/// Where one request's key may go (docs/design.md, "APIKeys documents"): only to the origin —
/// scheme, host and port (the scheme's default when absent) — of the URL the
/// caller asked for, and only when that host is one of the key's `hosts`;
/// checked again at every redirect hop. Over plain `http://` only to a
/// loopback host, unless the key says `"insecure": true`.
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
    guard key.metadata.hosts?.contains(here.host) == true else { return "\(here.host) is not one of its hosts" }
    switch here.scheme {
    case "https": return nil
    case "http" where here.isLoopback || key.metadata.insecure == true: return nil
    case "http": return "plain http:// to a host that is not loopback (set \"insecure\": true on the key to allow it)"
    default: return "\(here.scheme) is not http or https"
    }
  }
}
