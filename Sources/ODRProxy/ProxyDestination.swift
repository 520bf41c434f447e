#if canImport(Glibc)
import Glibc
#endif
import ODRKeyFormat

/// Where the proxy may open a connection for the sandboxed command. The
/// sandbox's network is its own loopback: what the proxy connects to is
/// the command's only way out, so the proxy does not connect where the
/// sandbox keeps it from — the machine's own loopback (local databases,
/// a Docker API, other users' listeners), link-local addresses (a cloud's
/// instance metadata, with its credentials), the unspecified and multicast
/// ones — unless a key of the run is bound to that host and port (a local
/// API the user named), or `--allow-connect` opens it (a relay of its own).
public enum ProxyDestination {
  /// Whether a key of `bindings` may go to `scheme://host:port`
  /// (``KeyHost/refusal(hosts:insecure:scheme:host:port:)``): the user
  /// named that destination, so it is reachable whatever its address.
  public static func isBound(scheme: String, host: ProxyHost, port: Int, bindings: [ProxyBinding]) -> Bool {
    bindings.contains { binding in
      let metadata = binding.key.metadata
      return KeyHost.refusal(hosts: metadata.hosts ?? [], insecure: metadata.insecure == true, scheme: scheme, host: host.text, port: port) == nil
    }
  }

  /// Why the proxy must not connect to `address` (an IP literal, as
  /// ``ProxyHost`` writes it) for the command, or nil.
  public static func refusal(address: String) -> String? {
    guard let host = ProxyHost(address), host.kind != .name else { return "\(address) is not an address" }
    var bytes = [UInt8](repeating: 0, count: 16)
    guard inet_pton(host.kind == .ipv4 ? AF_INET : AF_INET6, host.text, &bytes) == 1 else { return "\(address) is not an address" }
    var v4: [UInt8]? = host.kind == .ipv4 ? Array(bytes[0..<4]) : nil
    if host.kind == .ipv6 {
      // An IPv4 address written as IPv6 (::ffff:a.b.c.d) is that address.
      if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff { v4 = Array(bytes[12..<16]) }
    }
    if let v4 {
      switch v4[0] {
      case 127: return "\(address) is the machine's own loopback"
      case 0: return "\(address) is the unspecified address (this machine)"
      case 169 where v4[1] == 254: return "\(address) is link-local (a cloud's instance metadata lives there)"
      case 224...255: return "\(address) is a multicast or broadcast address"
      default: return nil
      }
    }
    if bytes[0..<15].allSatisfy({ $0 == 0 }) && (bytes[15] == 1 || bytes[15] == 0) {
      return "\(address) is the machine's own loopback or the unspecified address"
    }
    if bytes[0] == 0xfe && bytes[1] & 0xc0 == 0x80 { return "\(address) is link-local" }
    if bytes[0] == 0xff { return "\(address) is a multicast address" }
    return nil
  }
}
