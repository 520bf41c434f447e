public import FoundationEssentials
import ODRBase

/// One line of the proxy's audit log (`--proxy-log FILE`, else stderr): a
/// key used, or a request refused. Written before substitution, so it holds
/// placeholders and names, never a value; the path without its query;
/// control characters escaped by the JSON encoding.
public struct ProxyAuditRecord: Sendable, Equatable, Encodable {
  public let time: String
  /// The keys the request carried (used) or was refused for; [] when the
  /// refusal concerns no key (a misdirected request, a missing token).
  public let keys: [String]
  public let method: String
  public let host: String
  public let path: String
  public let status: Int
  /// Why it was refused; nil when it went upstream.
  public let refusal: String?
  /// The connecting process (`comm`, `exe`), when the proxy could tell.
  public let process: String?

  public init(time: Date, keys: [String], method: String, host: String, target: String, status: Int, refusal: String?, process: String?) {
    self.time = time.formatted(.iso8601)
    self.keys = keys
    self.method = String(method.prefix(32))
    self.host = String(host.prefix(256))
    self.path = String(ProxyDecision.split(target).path.prefix(1024))
    self.status = status
    self.refusal = refusal
    self.process = process
  }

  /// The record as one JSON line, newline included.
  public var line: String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    // strings and integers only: encoding cannot fail
    let data = dropping(.cannotFail) { try encoder.encode(self) } ?? Data("{}".utf8)
    return String(decoding: data, as: UTF8.self) + "\n"
  }
}
