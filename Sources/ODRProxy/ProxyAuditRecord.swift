public import FoundationEssentials

/// One line of the proxy's audit log (`--proxy-log FILE`, else stderr): a
/// key used, or a request refused. Written before substitution, so it holds
/// placeholders and names, never a value; the path without its query;
/// control characters escaped by the JSON encoding.
public struct ProxyAuditRecord: Sendable, Equatable {
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
  /// Placeholders that went on as they are ("placeholder of K in the body,
  /// not substituted"), joined by "; ".
  public let note: String?
  /// The connecting process (`comm`, `exe`), when the proxy could tell.
  public let process: String?

  public init(time: Date, keys: [String], method: String, host: String, target: String, status: Int, refusal: String?, note: String? = nil,
              process: String?) {
    self.time = Self.iso8601(time)
    self.keys = keys
    self.method = String(method.prefix(32))
    self.host = String(host.prefix(256))
    self.path = String(ProxyDecision.split(target).path.prefix(1024))
    self.status = status
    self.refusal = refusal
    self.note = note.map { String($0.prefix(2048)) }
    self.process = process
  }

  /// The record as one JSON line, newline included: keys sorted, absent
  /// fields left out. Written by hand (one per proxied request: JSONEncoder
  /// and Date's formatter were a measurable part of a keep-alive request).
  public var line: String {
    var fields = ["\"host\":" + Self.quoted(host), "\"keys\":[" + keys.map(Self.quoted).joined(separator: ",") + "]",
                  "\"method\":" + Self.quoted(method), "\"path\":" + Self.quoted(path)]
    if let note { fields.append("\"note\":" + Self.quoted(note)) }
    if let process { fields.append("\"process\":" + Self.quoted(process)) }
    if let refusal { fields.append("\"refusal\":" + Self.quoted(refusal)) }
    fields.append("\"status\":\(status)")
    fields.append("\"time\":" + Self.quoted(time))
    return "{" + fields.joined(separator: ",") + "}\n"
  }

  /// `text` as a JSON string: quotes, backslashes and control characters escaped.
  static func quoted(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case _ where scalar.value < 0x20 || scalar.value == 0x7f:
        let hex = String(scalar.value, radix: 16)
        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  }

  /// `date` as `YYYY-MM-DDThh:mm:ssZ` (UTC, whole seconds).
  public static func iso8601(_ date: Date) -> String {
    let seconds = Int(date.timeIntervalSince1970.rounded(.down))
    let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
    let rest = seconds - days * 86400
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let mp = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
    return "\(year)-\(two(month))-\(two(day))T\(two(rest / 3600)):\(two(rest / 60 % 60)):\(two(rest % 60))Z"
  }
}
