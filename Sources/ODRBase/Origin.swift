public import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A URL's scheme, host and port (the scheme's default when absent): the
/// one definition of "the same origin" and of "this machine" for every
/// credential route — catalog tokens, S3 credentials, keys, caller headers.
public struct Origin: Sendable, Hashable, CustomStringConvertible {
  /// Lower case.
  public let scheme: String
  /// Lower case, without the brackets of an IPv6 literal.
  public let host: String
  public let port: Int

  /// The origin of `url`; nil without a scheme or host, or without a port
  /// for a scheme other than http and https.
  public init?(_ url: URL) {
    guard let scheme = url.scheme?.lowercased(), var host = url.host(percentEncoded: false)?.lowercased(), !host.isEmpty,
          let port = url.port ?? ["http": 80, "https": 443][scheme] else { return nil }
    if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    self.scheme = scheme
    self.host = host
    self.port = port
  }

  /// `scheme://host:port`, an IPv6 host in brackets.
  public var description: String { "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)" }

  /// True when the host is this machine by its address: an IPv4 literal in
  /// 127.0.0.0/8, the IPv6 `::1` (or an IPv4-mapped loopback), or exactly
  /// `localhost` — never by a name's prefix or suffix (`127.attacker.example`
  /// and `x.localhost` are names anyone can point anywhere).
  public var isLoopback: Bool { Self.isLoopback(host) }

  /// ``isLoopback`` for a bare host.
  public static func isLoopback(_ host: String) -> Bool {
    var host = host.lowercased()
    if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    if host == "localhost" { return true }
    var v4 = in_addr()
    if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
    var v6 = in6_addr()
    guard inet_pton(AF_INET6, host, &v6) == 1 else { return false }
    let bytes = withUnsafeBytes(of: v6) { Array($0) }
    if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
    // ::ffff:127.x.y.z
    return bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff && bytes[12] == 127
  }
}

extension URL {
  /// The URL as odr shows it in messages and keys it in state: a query
  /// (a SAS token, a presigned signature, `?token=`) and a fragment are
  /// replaced by `?…`, so a credential in a catalog URL reaches no message,
  /// log line or state file.
  public var redacted: String {
    guard query(percentEncoded: true) != nil || fragment(percentEncoded: true) != nil,
          var parts = URLComponents(url: self, resolvingAgainstBaseURL: false) else { return absoluteString }
    parts.percentEncodedQuery = nil
    parts.percentEncodedFragment = nil
    return (parts.string ?? "") + "?…"
  }
}
