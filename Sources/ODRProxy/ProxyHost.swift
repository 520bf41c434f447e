#if canImport(Glibc)
import Glibc
#endif

/// A host as the proxy compares them: a name in lower case without a final
/// dot, or an IP literal in one canonical form (IPv6 compressed, without
/// brackets). A name never equals an IP literal, and IPv4 literals are
/// dotted decimal only (`inet_pton`: no octal, hex or short forms).
public struct ProxyHost: Sendable, Hashable, CustomStringConvertible {
  public enum Kind: Sendable, Hashable { case name, ipv4, ipv6 }

  public let text: String
  public let kind: Kind

  /// nil for an empty host, a name with characters no DNS name or URL
  /// authority has, or a bracketed literal that is not IPv6.
  public init?(_ raw: String) {
    var host = raw.lowercased()
    if host.hasPrefix("[") {
      guard host.hasSuffix("]"), let ipv6 = Self.canonical(String(host.dropFirst().dropLast()), family: AF_INET6) else { return nil }
      (text, kind) = (ipv6, .ipv6)
      return
    }
    if let ipv6 = Self.canonical(host, family: AF_INET6) {
      (text, kind) = (ipv6, .ipv6)
      return
    }
    if let ipv4 = Self.canonical(host, family: AF_INET) {
      (text, kind) = (ipv4, .ipv4)
      return
    }
    if host.hasSuffix(".") { host.removeLast() }
    guard !host.isEmpty, host.utf8.count <= 253,
          host.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2d || $0 == 0x2e || $0 == 0x5f }),
          !host.hasPrefix("."), !host.contains("..")
    else { return nil }
    (text, kind) = (host, .name)
  }

  /// As it goes in a `Host` header or an authority: an IPv6 literal in brackets.
  public var description: String { kind == .ipv6 ? "[\(text)]" : text }

  private static func canonical(_ text: String, family: Int32) -> String? {
    var address = [UInt8](repeating: 0, count: 16)
    guard inet_pton(family, text, &address) == 1 else { return nil }
    var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
    guard inet_ntop(family, address, &buffer, socklen_t(buffer.count)) != nil else { return nil }
    return String(decoding: buffer.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self)
  }
}
