import FoundationEssentials
import ODRBase
import ODRKeyFormat
import ODRURL

/// What the proxy of `odr exec --proxy` does with one request: its one decision,
/// a pure function of the request and the run's bindings, taken before
/// anything goes upstream.
///
/// A placeholder becomes its key's value only where the key's metadata
/// sends it — the header it names (with its scheme), the query parameter it
/// names — on a request to one of its hosts (``KeyHost``'s rule). A
/// placeholder anywhere else (the path, another header, another parameter,
/// the body, or bound for another host) goes upstream as it is — worthless
/// there — with a note for the audit log; one in the method is refused. The names the request is routed by (the CONNECT line, the
/// `Host` header, the absolute-form authority, SNI) must all be the
/// connection's host, else 421. Hop-by-hop headers never go upstream; a
/// request that carries a key asks for an uncompressed answer (the masker
/// reads it; one that carries a key asks for it whole, without `Range`) and
/// may not be an upgrade.
public enum ProxyDecision: Sendable, Equatable {
  /// Send it upstream: these headers and target, which carry `keys`.
  case forward(Forward)
  /// Answer it with `status` and say why; nothing goes upstream.
  case refuse(Refusal)

  public struct Forward: Sendable, Equatable {
    public let headers: [ProxyRequest.Header]
    public let target: String
    /// The names of the keys substituted, sorted.
    public let keys: [String]
    /// The request asks for a protocol upgrade (none carries a key).
    public let upgrade: Bool
    /// The request goes to a host a key of the run is bound to: its answer
    /// must be one the masker can read (no content or transfer coding).
    public let toBoundHost: Bool
    /// Placeholders that go on as they are, each said once for the audit
    /// log ("placeholder of K in the path, not substituted").
    public var notes: [String]
  }

  public struct Refusal: Sendable, Equatable {
    public let status: Int
    /// The key the refusal is about, if one.
    public let key: String?
    public let reason: String
  }

  /// Headers that describe one connection, not the request (RFC 9110
  /// §7.6.1), and the proxy's own.
  static let hopByHop: Set<String> = ["connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
                                      "te", "trailer", "transfer-encoding", "upgrade"]

  public static func decide(_ request: ProxyRequest, bindings: [ProxyBinding]) -> ProxyDecision {
    guard let host = ProxyHost(request.host) else { return refuse(400, nil, "the request names no valid host (\(printable(request.host)))") }
    if let misdirected = misdirection(request, host: host) { return refuse(421, nil, misdirected) }

    let connectionTokens = Set(request.headers.filter { $0.name.lowercased() == "connection" }
      .flatMap { $0.value.split(separator: ",").map { trimmed($0).lowercased() } })
    let upgrade = request.headers.contains { $0.name.lowercased() == "upgrade" }
    var headers = request.headers.filter { !hopByHop.contains($0.name.lowercased()) && !connectionTokens.contains($0.name.lowercased()) }
    let (path, query) = split(request.target)
    var substituted = query.map { $0.split(separator: "&", omittingEmptySubsequences: false).map(String.init) }
    var used: [String] = []
    var notes: [String] = []
    // A request the child signed with an AWS credential's placeholders
    // (SigV4), to the credential's hosts, is checked and signed again with
    // the real one (``SigV4Resigner``) — last, over exactly what goes
    // upstream. Elsewhere it goes on as it is.
    let signing = SigV4Resigner(bindings).flatMap { aws in
      SigV4Resigner.Signature(headers: request.headers, query: substituted).flatMap { signature in
        signature.accessKeyID == aws.accessKeyID.placeholder.text
          && aws.bindings.allSatisfy({ routeRefusal($0, scheme: request.scheme, host: host, port: request.port) == nil }) ? (aws, signature) : nil
      }
    }
    for binding in bindings {
      let placeholder = binding.placeholder.text
      let name = binding.key.name
      if holds(request.method, placeholder) { return refuse(403, name, "its placeholder is in the method") }
      if let (aws, _) = signing, aws.bindings.contains(where: { $0.key.name == name }) { continue }
      // Substituted only where its metadata sends it, on a request to one of
      // its hosts; anywhere else it goes on as it is (worthless there), said.
      let route = routeRefusal(binding, scheme: request.scheme, host: host, port: request.port)
      var found = false
      var elsewhere: [String] = []
      if holds(path, placeholder) { elsewhere.append("the path") }
      for (index, header) in headers.enumerated() where holds(header.value, placeholder) || holds(header.name, placeholder)
        || basicCredentials(header.value).map({ holds($0.user, placeholder) || holds($0.password, placeholder) }) == true {
        guard route == nil, let value = headerValue(header, placeholder: placeholder, key: binding.key) else {
          let basic = header.name.lowercased() == "authorization" && basicCredentials(header.value) != nil
          elsewhere.append(basic && binding.key.metadata.basic == nil
            ? "a Basic Authorization header, which its metadata does not name (git: -c http.extraHeader=\"Authorization: Bearer …\")"
            : "the \(printable(header.name)) header")
          continue
        }
        guard !value.utf8.contains(where: { $0 == 0x0d || $0 == 0x0a || $0 == 0x00 }) else {
          return refuse(403, name, "its value holds a line break or NUL, which cannot go in a header")
        }
        headers[index].value = value
        found = true
      }
      if let current = substituted {
        for (index, parameter) in current.enumerated() where holds(parameter, placeholder) {
          guard route == nil, let query = binding.key.metadata.query,
                parameter == PercentEncoding.encode(query) + "=" + placeholder || parameter == query + "=" + placeholder else {
            elsewhere.append("the query parameter \(printable(parameter.split(separator: "=", maxSplits: 1).first.map(String.init) ?? parameter))")
            continue
          }
          substituted?[index] = String(parameter.dropLast(placeholder.count)) + PercentEncoding.encode(binding.key.value)
          found = true
        }
      }
      if !elsewhere.isEmpty { notes.append(note(name, elsewhere.joined(separator: ", "), route: route)) }
      if found && !used.contains(name) { used.append(name) }
    }
    guard !(upgrade && !used.isEmpty) else { return refuse(403, used.sorted().first, "an upgrade (WebSocket) request may not carry a key") }
    // APIClient's rule: a URL string the strict and the encoding parse
    // disagree on never carries a key (what goes on the wire could differ
    // from what was meant).
    if !used.isEmpty || signing != nil {
      let url = "\(request.scheme.lowercased())://\(host):\(request.port)\(request.target)"
      do {
        _ = try URLPolicy.consistent.url(from: url)
      } catch {
        return refuse(400, used.sorted().first ?? signing?.0.accessKeyID.key.name, "its request's URL is ambiguous: \(error.reason)")
      }
    }
    // A request to a bound host asks for an answer the masker can read:
    // not compressed, and — when it carries a key — whole (the pieces of a
    // Range request could each hold a part of a value).
    let bound = bindings.contains { $0.covers(host) }
    if bound {
      headers.removeAll { $0.name.lowercased() == "accept-encoding" }
      headers.append(ProxyRequest.Header("Accept-Encoding", "identity"))
    }
    if !used.isEmpty { headers.removeAll { ["range", "if-range"].contains($0.name.lowercased()) } }
    if let (aws, signature) = signing {
      switch aws.resign(request, signature, headers: headers, query: substituted) {
      case .failure(let refusal): return refuse(403, aws.secret.key.name, refusal.reason)
      case .success(let signed): (headers, substituted, used) = (signed.headers, signed.query, used + signed.keys)
      }
    }
    let target = path + (substituted.map { "?" + $0.joined(separator: "&") } ?? "")
    return .forward(Forward(headers: headers, target: target, keys: used.sorted(), upgrade: upgrade, toBoundHost: bound, notes: notes))
  }

  /// The notes for a request body that holds placeholders: bodies are
  /// never rewritten, so each goes upstream as it is (worthless there — an
  /// LLM conversation quoting what a command printed, say). One pass over
  /// the body, each placeholder's first bytes looked up.
  public static func bodyNotes(_ body: some RandomAccessCollection<UInt8>, bindings: [ProxyBinding]) -> [String] {
    var named: Set<String> = []
    let bytes = Array(body)
    let byFirst = Dictionary(grouping: bindings) { $0.placeholder.text.utf8.first ?? 0 }
    for index in bytes.indices {
      guard let candidates = byFirst[bytes[index]] else { continue }
      for binding in candidates where !named.contains(binding.key.name) && bytes[index...].starts(with: binding.placeholder.text.utf8) {
        named.insert(binding.key.name)
      }
      if named.count == bindings.count { break }
    }
    return bindings.map(\.key.name).filter(named.contains).map { note($0, "the body", route: nil) }
  }

  /// An audit note: a placeholder that goes on as it is.
  static func note(_ key: String, _ place: String, route: String?) -> String {
    "placeholder of \(key) in \(place), not substituted" + (route.map { " (\($0))" } ?? "")
  }

  /// Why a request naming several hosts is misdirected, or nil.
  static func misdirection(_ request: ProxyRequest, host: ProxyHost) -> String? {
    let hostHeaders = request.headers.filter { $0.name.lowercased() == "host" }
    guard hostHeaders.count <= 1 else { return "it has \(hostHeaders.count) Host headers" }
    var named = request.routing
    if let header = hostHeaders.first {
      let (name, port) = authority(header.value)
      if let port, port != request.port { return "its Host header names port \(port), the connection goes to \(request.port)" }
      named.append(("Host header", name))
    }
    for (place, name) in named where ProxyHost(name) != host {
      return "the \(place) names \(printable(name)), the connection goes to \(host)"
    }
    return nil
  }

  /// A header's value with the key in place of its placeholder, when the
  /// header and its form are the ones the key's metadata names; else nil.
  static func headerValue(_ header: ProxyRequest.Header, placeholder: String, key: APIKey) -> String? {
    if let basic = key.metadata.basic, header.name.lowercased() == "authorization", let credentials = basicCredentials(header.value),
       credentials.password == placeholder, basic.isEmpty || credentials.user == basic {
      return "Basic " + Data((credentials.user + ":" + key.value).utf8).base64EncodedString()
    }
    for place in key.metadata.headerPlaces where header.name.lowercased() == place.name.lowercased() {
      guard let scheme = place.scheme else {
        if header.value == placeholder { return key.value }
        continue
      }
      let parts = header.value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
      if parts.count == 2, parts[0].lowercased() == scheme.lowercased(), parts[1] == placeholder { return "\(parts[0]) \(key.value)" }
    }
    return nil
  }

  /// The user and password of an `Authorization: Basic` value, decoded.
  static func basicCredentials(_ value: String) -> (user: String, password: String)? {
    let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
    guard parts.count == 2, parts[0].lowercased() == "basic", let decoded = Data(base64Encoded: trimmed(parts[1])),
          let text = String(validating: decoded, as: UTF8.self), let colon = text.firstIndex(of: ":") else { return nil }
    return (String(text[..<colon]), String(text[text.index(after: colon)...]))
  }

  /// Why the key may not go to `host:port` over `scheme`, or nil (the
  /// networking wrapper's rule, ``KeyHost/refusal(hosts:insecure:scheme:host:port:)``).
  static func routeRefusal(_ binding: ProxyBinding, scheme: String, host: ProxyHost, port: Int) -> String? {
    let metadata = binding.key.metadata
    return KeyHost.refusal(hosts: metadata.hosts ?? [], insecure: metadata.insecure == true, scheme: printable(scheme), host: host.text, port: port)
  }

  /// Where the key's metadata lets it go, for a message.
  static func places(_ metadata: KeyMetadata) -> String {
    var places = metadata.headerPlaces.map { place in place.scheme.map { "the \(place.name) header as \"\($0) <key>\"" } ?? "the \(place.name) header" }
    if let basic = metadata.basic { places.append(basic.isEmpty ? "a Basic Authorization header's password" : "the password of \(basic) in a Basic Authorization header") }
    if let query = metadata.query { places.append("the query parameter \(query)") }
    return places.isEmpty ? "nowhere (its metadata names no header or query parameter)" : places.joined(separator: " or ")
  }

  static func split(_ target: String) -> (path: String, query: String?) {
    guard let mark = target.firstIndex(of: "?") else { return (target, nil) }
    return (String(target[..<mark]), String(target[target.index(after: mark)...]))
  }

  /// `host[:port]` of a Host header; an IPv6 literal keeps its brackets.
  package static func authority(_ value: String) -> (host: String, port: Int?) {
    let value = trimmed(value[...])
    if value.hasPrefix("["), let close = value.firstIndex(of: "]") {
      let rest = value[value.index(after: close)...]
      return (String(value[...close]), rest.hasPrefix(":") ? Int(rest.dropFirst()) ?? -1 : nil)
    }
    let parts = value.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
    return (String(parts[0]), parts.count == 2 ? Int(parts[1]) ?? -1 : nil)
  }

  /// Without the optional white space (spaces and tabs) HTTP allows around
  /// a value. Byte by byte: every request's headers pass here.
  package static func trimmed(_ text: Substring) -> String {
    let utf8 = text.utf8
    let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
    guard let first = utf8.firstIndex(where: { !isSpace($0) }), let last = utf8.lastIndex(where: { !isSpace($0) }) else { return "" }
    return String(decoding: utf8[first...last], as: UTF8.self)
  }

  /// Whether `needle`'s bytes occur in `text`: `contains(_:)` without the
  /// searcher (and its dictionary) the standard library builds on every
  /// call, which made it most of the decision's time. Every request's
  /// method, path, headers and query pass here once per key.
  static func holds(_ text: some StringProtocol, _ needle: String) -> Bool {
    let (bytes, pattern) = (text.utf8, needle.utf8)
    guard let head = pattern.first else { return true }
    var index = bytes.startIndex
    while let found = bytes[index...].firstIndex(of: head) {
      if bytes[found...].starts(with: pattern) { return true }
      index = bytes.index(after: found)
    }
    return false
  }

  /// Text from the request, safe in a message or a log line: control
  /// characters escaped, at most 80 characters.
  package static func printable(_ text: String) -> String {
    let escaped = text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined()
    return escaped.count > 80 ? String(escaped.prefix(80)) + "…" : escaped
  }

  private static func refuse(_ status: Int, _ key: String?, _ reason: String) -> ProxyDecision {
    .refuse(Refusal(status: status, key: key, reason: reason))
  }
}
