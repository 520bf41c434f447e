public import FoundationEssentials
import ODRBase
public import ODRTransports

/// odr.json `"auth"`: the catalog token, read from the keyring only when
/// the item was stored as a token for the catalog's origin, and sent only
/// over https (or plain http to this machine). A cloned repository's
/// odr.json names a key and a service, but cannot make odr send any other
/// keyring item anywhere (docs/trust.md, "Threat model").
public enum CatalogAuth {
  /// `scheme://host:port` of an http(s) URL (lower case, port explicit),
  /// or nil for anything else: the item's origin attribute.
  public static func origin(of url: URL) -> String? {
    guard let origin = Origin(url), origin.scheme == "http" || origin.scheme == "https" else { return nil }
    return origin.description
  }

  /// The header `auth` asks for on requests to `url`, its token read from
  /// `tokens` (nil: the program gave no keyring to read it from).
  public static func credential(_ auth: ProjectFile.Auth, for url: URL, tokens: (any CatalogTokenSource)?) async throws -> HTTPCredential {
    guard let origin = origin(of: url) else {
      throw ConfigurationError("odr.json \"auth\" applies to http(s) catalogs only; \(url.redacted) is not one.")
    }
    guard url.scheme?.lowercased() == "https" || Origin(url)?.isLoopback == true else {
      throw ConfigurationError("odr.json \"auth\": refusing to send the catalog token over plain http to \(url.host ?? "?") (anyone on the path could read it). Serve the catalog over https.")
    }
    guard let tokens else {
      throw ConfigurationError("odr.json \"auth\" asks for the catalog token '\(auth.key)' of \(auth.service), and this program reads no keyring for it (set ODRConfiguration.catalogTokens).")
    }
    let value = try await tokens.catalogToken(named: auth.key, service: auth.service, origin: origin)
    let header = auth.header ?? "Authorization"
    guard header.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: ":") }) else {
      throw ConfigurationError("odr.json \"auth\": '\(header.prefix(40))' is not an HTTP header name.")
    }
    let scheme = auth.scheme ?? (header.lowercased() == "authorization" ? "Bearer" : "")
    let full = scheme.isEmpty ? value : "\(scheme) \(value)"
    guard !full.utf8.contains(where: { $0 == 0x0d || $0 == 0x0a || $0 == 0 }) else {
      throw ConfigurationError("odr.json \"auth\": the catalog token '\(auth.key)' of \(auth.service) holds a line break, which cannot go in an HTTP header. Store it again without one.")
    }
    return HTTPCredential(header: header, value: full, origin: url, name: "the keyring item \(auth.key) of \(auth.service) (odr.json \"auth\")")
  }
}
