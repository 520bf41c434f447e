/// A base URL the proxy stands in for (`--proxy-base NAME=https://api.example/v1`):
/// the child gets `NAME_BASE_URL=http://127.0.0.1:PORT/<token>/NAME` and
/// the proxy sends what arrives there to the real origin, under its path.
///
/// The run's token is the first path segment (not the issue's
/// `http://127.0.0.1:PORT/NAME`): SDKs that take a base URL send no proxy
/// credentials, and without it any process of the machine could use the
/// keys through the port.
public struct ProxyBase: Sendable, Equatable {
  /// Upper case letters, digits and `_`, starting with a letter.
  public let name: String
  public let scheme: String
  public let host: ProxyHost
  public let port: Int
  /// The origin's path prefix, without a trailing `/` (often empty).
  public let path: String

  /// Parses `NAME=URL`; nil with a message when either part is not usable.
  public static func parse(_ argument: String) -> Result<ProxyBase, ProxyBaseError> {
    guard let equals = argument.firstIndex(of: "=") else { return .failure(ProxyBaseError("expected NAME=URL, e.g. OPENAI=https://api.openai.com/v1")) }
    let name = String(argument[..<equals])
    let url = String(argument[argument.index(after: equals)...])
    guard let first = name.utf8.first, (0x41...0x5a).contains(first),
          name.utf8.allSatisfy({ (0x41...0x5a).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5f }) else {
      return .failure(ProxyBaseError("\(ProxyDecision.printable(name)): a base's name is upper case letters, digits and _ (it becomes NAME_BASE_URL)"))
    }
    let lower = url.lowercased()
    let scheme = lower.hasPrefix("https://") ? "https" : lower.hasPrefix("http://") ? "http" : nil
    guard let scheme else { return .failure(ProxyBaseError("\(ProxyDecision.printable(url)): a base URL starts with https:// (or http://)")) }
    let rest = url.dropFirst(scheme.count + 3)
    let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
    guard !rest[authorityEnd...].contains("?"), !rest[authorityEnd...].contains("#"), !rest[..<authorityEnd].contains("@") else {
      return .failure(ProxyBaseError("\(ProxyDecision.printable(url)): a base URL has no user, query or fragment"))
    }
    let (hostText, port) = ProxyDecision.authority(String(rest[..<authorityEnd]))
    guard let host = ProxyHost(hostText), port.map({ (1...65535).contains($0) }) ?? true else {
      return .failure(ProxyBaseError("\(ProxyDecision.printable(url)): no valid host and port"))
    }
    var path = String(rest[authorityEnd...])
    while path.hasSuffix("/") { path.removeLast() }
    return .success(ProxyBase(name: name, scheme: scheme, host: host, port: port ?? (scheme == "https" ? 443 : 80), path: path))
  }

  /// The variable the child gets.
  public var variable: String { name + "_BASE_URL" }

  /// The URL the child gets for this base.
  public func localURL(port: Int, token: String) -> String { "http://127.0.0.1:\(port)/\(token)/\(name)" }

  /// The base a request target (origin-form, sent to the proxy's own
  /// address) is for, and the target on the origin; nil when the target
  /// does not start with `/<token>/<NAME>` (followed by `/`, `?` or its end)
  /// for one of `bases`. The token is compared in constant time.
  public static func route(_ target: String, token: String, bases: [ProxyBase]) -> (base: ProxyBase, target: String)? {
    guard target.hasPrefix("/") else { return nil }
    let segments = target.dropFirst().split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
    guard segments.count == 2, ProxyCredentials(token: token).acceptsToken(String(segments[0])) else { return nil }
    let rest = segments[1]
    for base in bases where rest.hasPrefix(base.name) {
      let after = rest.dropFirst(base.name.count)
      guard after.isEmpty || after.hasPrefix("/") || after.hasPrefix("?") else { continue }
      let tail = after.hasPrefix("?") ? "/" + after : (after.isEmpty ? "/" : String(after))
      return (base, base.path + tail)
    }
    return nil
  }
}

/// Why a `--proxy-base` argument is not usable.
public struct ProxyBaseError: Error, Sendable, Equatable {
  public let message: String
  init(_ message: String) { self.message = message }
}
