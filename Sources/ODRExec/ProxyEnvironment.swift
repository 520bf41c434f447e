public import ODRKeyFormat
public import ODRProxy

/// The environment a child of `odr exec --proxy` starts with: a
/// placeholder where each key's variable would hold its value, the proxy
/// (with the run's token) for every HTTP client that reads the usual
/// variables, the run's CA bundle for every TLS stack that reads one, and
/// nothing that leads to the keyring.
public struct ProxyEnvironment: Sendable {
  /// The variables that point a TLS stack at a CA bundle.
  public static let caBundleVariables = ["SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO",
                                         "AWS_CA_BUNDLE", "PIP_CERT", "CARGO_HTTP_CAINFO", "DENO_CERT"]
  /// Variables that lead to the keyring or to odr's own configuration,
  /// never inherited (besides every `ODR_*`).
  public static let withheld: Set<String> = ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "SSH_AUTH_SOCK", "GNOME_KEYRING_CONTROL"]

  /// The bindings the child's placeholders stand for.
  public let bindings: [ProxyBinding]
  /// `NAME=value` lines, sorted.
  public let variables: [String]

  /// One line naming the keys left out (they name no hosts), or nil.
  public let warning: String?
  /// Inherited variables left out because they held a key's value (a key
  /// the user had exported, say), sorted: the child sees none of them.
  public let withheldVariables: [String]

  /// `keys` (already narrowed by `--only`) as placeholders in `base`, with
  /// the proxy at `127.0.0.1:port` behind `token` and the CA bundle at
  /// `caBundle`; each of `bases` as `NAME_BASE_URL`. The placeholders are
  /// those of `given` (the bindings the proxy was started with), else new.
  /// Throws as `odr exec` does when no key is left.
  public init(keys: [APIKey], base: [String: String], port: Int, token: String, caBundle: String,
              bindings given: [ProxyBinding] = [], bases: [ProxyBase] = []) throws {
    let unbound = keys.filter { ($0.metadata.hosts ?? []).isEmpty }.map(\.name).sorted()
    let named = try SecretVariables(keys: keys.filter { !($0.metadata.hosts ?? []).isEmpty })
    let byName = Dictionary(uniqueKeysWithValues: keys.map { ($0.name, $0) })
    let known = Dictionary(given.map { ($0.key.name, $0) }, uniquingKeysWith: { first, _ in first })
    bindings = named.variables.compactMap { variable in known[variable.key] ?? byName[variable.key].map { ProxyBinding(key: $0) } }
    let placeholders = Dictionary(uniqueKeysWithValues: bindings.map { ($0.key.name, $0.placeholder.text) })

    let values = keys.map(\.value).filter { !$0.isEmpty }
    let holding = base.filter { _, value in values.contains { value.contains($0) } }.keys
    withheldVariables = holding.sorted()
    var environment = base.filter { name, _ in !Self.withheld.contains(name) && !name.hasPrefix("ODR_") && !holding.contains(name) }
    for variable in named.variables { environment[variable.name] = placeholders[variable.key] }
    let proxy = "http://odr:\(token)@127.0.0.1:\(port)"
    for name in ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"] { environment[name] = proxy }
    environment["NODE_USE_ENV_PROXY"] = "1"
    for name in ["NO_PROXY", "no_proxy"] {
      guard let list = environment[name] else { continue }
      environment[name] = Self.noProxy(list, without: bindings)
    }
    for name in Self.caBundleVariables { environment[name] = caBundle }
    for proxied in bases { environment[proxied.variable] = proxied.localURL(port: port, token: token) }
    variables = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
    warning = unbound.isEmpty ? nil
      : "odr: left out \(unbound.joined(separator: ", ")): \(unbound.count == 1 ? "it names" : "they name") no hosts, so no request may carry \(unbound.count == 1 ? "it" : "them")."
  }

  /// A NO_PROXY list without the entries that would send a bound host
  /// around the proxy: `*`, a host a key is bound to, or a domain one is
  /// in (or, for a suffix entry `.example.com`, a name under it).
  static func noProxy(_ list: String, without bindings: [ProxyBinding]) -> String {
    let entries = bindings.flatMap(\.entries)
    return list.split(separator: ",").map { ProxyDecision.trimmed($0) }.filter { entry in
      guard !entry.isEmpty, entry != "*" else { return false }
      let suffix = entry.hasPrefix(".") ? String(entry.dropFirst()) : entry
      // host, host:port, [v6]:port, or a bare IPv6 literal
      guard let domain = ProxyHost(suffix.filter { $0 == ":" }.count > 1 && !suffix.hasPrefix("[") ? suffix : ProxyDecision.authority(suffix).host) else {
        return true
      }
      return !entries.contains { bound in
        guard let host = ProxyHost(bound.name) else { return false }
        let within = host.kind == .name && domain.kind == .name
        return host == domain || (within && host.text.hasSuffix("." + domain.text)) || (within && bound.isSuffix && domain.text.hasSuffix("." + host.text))
      }
    }.joined(separator: ",")
  }
}
