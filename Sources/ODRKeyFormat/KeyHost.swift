import ODRBase

/// One entry of a key's `hosts`: a host name (or IPv4 literal) and, for a
/// service on a port of its own, that port (`localhost:8080`); or, with a
/// leading dot, every name under a domain of two labels or more
/// (`.amazonaws.com`: a bucket's virtual host, a regional endpoint; not
/// the domain itself), or under `localhost`. It holds
/// the one rule of where a key may go, which the networking wrapper and
/// the proxy of `odr exec --proxy` both ask (``refusal(hosts:insecure:scheme:host:port:)``).
public struct KeyHost: Sendable, Hashable, CustomStringConvertible {
  /// The host (a suffix entry's domain, without its dot), in lower case.
  public let name: String
  /// The one port the entry covers; nil: every port (over https).
  public let port: Int?
  /// The entry covers the names under ``name``, not the name itself.
  public let isSuffix: Bool

  /// nil when `entry` is not a lower-case host name or IPv4 literal (or a
  /// name after a `.`), optionally followed by `:` and a port from 1 to 65535.
  public init?(_ entry: String) {
    isSuffix = entry.hasPrefix(".")
    var host = entry.dropFirst(isSuffix ? 1 : 0)
    var port: Int?
    if let colon = host.lastIndex(of: ":") {
      let digits = host[host.index(after: colon)...]
      guard !digits.isEmpty, digits.count <= 5, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int(digits),
            (1...65535).contains(number), digits.first != "0" else { return nil }
      host = host[..<colon]
      port = number
    }
    // A suffix covers a domain someone owns: two labels at least (not a
    // whole top-level domain, `.com`), but for names under localhost.
    guard Self.isHostName(host), !(isSuffix && (Self.isIPv4(host) || (!host.contains(".") && host != "localhost"))) else { return nil }
    name = String(host)
    self.port = port
  }

  public var description: String { (isSuffix ? "." : "") + name + (port.map { ":\($0)" } ?? "") }

  /// Whether the entry names `host` (a lower-case name or literal),
  /// whatever the port.
  public func covers(_ host: String) -> Bool {
    isSuffix ? host.hasSuffix("." + name) : host == name
  }

  /// Why a key bound to `hosts` (with `insecure`) must not go to
  /// `scheme://host:port`, or nil when it may. Over https, an entry without
  /// a port covers every port of its host (the certificate proves the
  /// host); plain http goes only to loopback (or where the key says
  /// `insecure`), and only to a port an entry names: any local user may
  /// listen on another port of a loopback address.
  public static func refusal(hosts: [String], insecure: Bool, scheme: String, host: String, port: Int) -> String? {
    let host = host.lowercased()
    let entries = hosts.compactMap(KeyHost.init).filter { $0.covers(host) }
    guard !entries.isEmpty else { return "\(host) is not one of its hosts" }
    switch scheme.lowercased() {
    case "https":
      guard entries.contains(where: { $0.port == nil || $0.port == port }) else {
        return "port \(port) of \(host) is not one its hosts name (\(entries.map(\.description).joined(separator: ", ")))"
      }
      return nil
    case "http":
      guard Origin.isLoopback(host) || insecure else {
        return "plain http:// to a host that is not loopback (set \"insecure\": true on the key to allow it)"
      }
      guard entries.contains(where: { $0.port == port }) else {
        return "plain http:// goes only to a port its hosts name, and they do not name \(host):\(port) (add \"\(host):\(port)\" to its hosts)"
      }
      return nil
    default:
      return "\(scheme) is not http or https"
    }
  }

  /// Four decimal labels: an IPv4 literal, not a name.
  static func isIPv4(_ s: Substring) -> Bool {
    let labels = s.split(separator: ".", omittingEmptySubsequences: false)
    return labels.count == 4 && labels.allSatisfy { $0.utf8.allSatisfy { (0x30...0x39).contains($0) } }
  }

  /// Lower-case DNS names (labels of letters, digits, '-') or IPv4 literals.
  static func isHostName(_ s: Substring) -> Bool {
    guard !s.isEmpty, s.utf8.count <= 253 else { return false }
    return s.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
      !label.isEmpty && label.utf8.count <= 63 && label.first != "-" && label.last != "-"
        && label.utf8.allSatisfy { (0x61...0x7a).contains($0) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "-") }
    }
  }
}
