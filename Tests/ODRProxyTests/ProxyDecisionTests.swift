import Foundation
import ODRKeyFormat
@testable import ODRProxy
import Testing

/// The proxy's one decision, case by case: where a placeholder becomes its
/// key, where it is refused, and which names must agree on the host.
@Suite struct ProxyDecisionTests {
  static let weather = ProxyBinding(key: APIKey(name: "Weather", value: "w-secret",
                                                metadata: KeyMetadata(header: "X-Api-Key", hosts: ["api.weather.example"])))
  static let bearer = ProxyBinding(key: APIKey(name: "Bearer", value: "b-secret",
                                               metadata: KeyMetadata(header: "Authorization", scheme: "Bearer", hosts: ["api.bearer.example"])))
  static let maps = ProxyBinding(key: APIKey(name: "Maps", value: "m s&cret/é",
                                             metadata: KeyMetadata(query: "key", hosts: ["maps.example"])))
  static let local = ProxyBinding(key: APIKey(name: "Local", value: "l-secret", metadata: KeyMetadata(header: "X-Key", hosts: ["127.0.0.1:8080"])))
  static let unbound = ProxyBinding(key: APIKey(name: "Unbound", value: "u-secret", metadata: KeyMetadata(header: "X-Key")))
  static let lineBreak = ProxyBinding(key: APIKey(name: "Broken", value: "a\r\nInjected: b",
                                                  metadata: KeyMetadata(header: "X-Key", hosts: ["api.weather.example"])))
  static let anthropic = ProxyBinding(key: APIKey(name: "Anthropic", value: "a-secret", metadata: {
    var metadata = KeyMetadata(hosts: ["api.anthropic.example"])
    metadata.headers = ["x-api-key", "Authorization: Bearer"]
    return metadata
  }()))
  static let github = ProxyBinding(key: APIKey(name: "GitHub", value: "g-secret", metadata: {
    var metadata = KeyMetadata(hosts: ["github.example"])
    metadata.basic = "x-access-token"
    return metadata
  }()))
  static let bindings = [weather, bearer, maps, local, unbound, lineBreak, anthropic, github]

  static func basic(_ user: String, _ password: String) -> String { "Basic " + Data("\(user):\(password)".utf8).base64EncodedString() }

  static func w(_ binding: ProxyBinding) -> String { binding.placeholder.text }

  static func request(_ method: String = "GET", scheme: String = "https", host: String, port: Int = 443, target: String = "/",
                      _ headers: [(String, String)] = [], routing: [(String, String)] = []) -> ProxyRequest {
    ProxyRequest(method: method, scheme: scheme, host: host, port: port, target: target,
                 headers: [.init("Host", host.contains(":") ? "[\(host)]" : host)] + headers.map { .init($0.0, $0.1) }, routing: routing)
  }

  /// What a decision comes to, for a table: `forward KEYS TARGET HEADER=VALUE…` or `refuse STATUS KEY: REASON`.
  static func summary(_ decision: ProxyDecision, headers: [String] = []) -> String {
    switch decision {
    case .forward(let forward):
      let shown = headers.map { name in "\(name)=\(forward.headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value).joined(separator: ","))" }
      return (["forward", forward.keys.joined(separator: ","), forward.target] + shown + (forward.notes.isEmpty ? [] : ["note=" + forward.notes.joined(separator: "; ")]))
        .joined(separator: " ")
    case .refuse(let refusal):
      return "refuse \(refusal.status) \(refusal.key ?? "-"): \(refusal.reason)"
    }
  }

  static let cases: [(String, ProxyRequest, [String], String)] = [
    ("a header key to its host", request(host: "api.weather.example", [("X-Api-Key", w(weather)), ("Accept-Encoding", "gzip")]),
     ["X-Api-Key", "Accept-Encoding"], "forward Weather / X-Api-Key=w-secret Accept-Encoding=identity"),
    ("the header's name in any case", request(host: "api.weather.example", [("x-api-key", w(weather))]),
     ["x-api-key"], "forward Weather / x-api-key=w-secret"),
    ("a scheme key in its form", request(host: "api.bearer.example", [("Authorization", "bearer \(w(bearer))")]),
     ["Authorization"], "forward Bearer / Authorization=bearer b-secret"),
    ("a scheme key without its scheme", request(host: "api.bearer.example", [("Authorization", w(bearer))]),
     [], "forward  / note=placeholder of Bearer in the Authorization header, not substituted"),
    ("a query key, percent-encoded", request(host: "maps.example", target: "/geo?q=a%20b&key=\(w(maps))&x=1"),
     [], "forward Maps /geo?q=a%20b&key=m%20s%26cret%2F%C3%A9&x=1"),
    ("an IPv6 literal is never a key's host (hosts name DNS names and IPv4)", request(host: "::1", target: "/?key=\(w(maps))", routing: [("SNI", "0:0:0:0:0:0:0:1")]),
     [], "forward  /?key=\(w(maps)) note=placeholder of Maps in the query parameter key, not substituted (::1 is not one of its hosts)"),
    ("in the path", request(host: "maps.example", target: "/v1/\(w(maps))/geo"),
     [], "forward  /v1/\(w(maps))/geo note=placeholder of Maps in the path, not substituted"),
    ("in another header", request(host: "api.weather.example", [("X-Debug", "k=\(w(weather))")]),
     [], "forward  / note=placeholder of Weather in the X-Debug header, not substituted"),
    ("in another query parameter", request(host: "maps.example", target: "/?callback=\(w(maps))"),
     [], "forward  /?callback=\(w(maps)) note=placeholder of Maps in the query parameter callback, not substituted"),
    ("in the method", request(w(weather), host: "api.weather.example"), [], "refuse 403 Weather: its placeholder is in the method"),
    ("to a host it is not bound to", request(host: "maps.example", [("X-Api-Key", w(weather))]),
     [], "forward  / note=placeholder of Weather in the X-Api-Key header, not substituted (maps.example is not one of its hosts)"),
    ("a key bound to no host", request(host: "api.weather.example", [("X-Key", w(unbound))]),
     [], "forward  / note=placeholder of Unbound in the X-Key header, not substituted (api.weather.example is not one of its hosts)"),
    ("plain http to a host that is not loopback", request(scheme: "http", host: "api.weather.example", port: 80, [("X-Api-Key", w(weather))]),
     [], "forward  / note=placeholder of Weather in the X-Api-Key header, not substituted (plain http:// to a host that is not loopback (set \"insecure\": true on the key to allow it))"),
    ("plain http to a loopback port its hosts name", request(scheme: "http", host: "127.0.0.1", port: 8080, [("X-Key", w(local))]),
     ["X-Key"], "forward Local / X-Key=l-secret"),
    ("plain http to another loopback port", request(scheme: "http", host: "127.0.0.1", port: 9090, [("X-Key", w(local))]),
     [], "forward  / note=placeholder of Local in the X-Key header, not substituted (plain http:// goes only to a port its hosts name, and they do not name 127.0.0.1:9090 (add \"127.0.0.1:9090\" to its hosts))"),
    ("https to a host: any port", request(host: "api.weather.example", port: 8443, [("X-Api-Key", w(weather))], routing: [("Host", "api.weather.example")]),
     ["X-Api-Key"], "forward Weather / X-Api-Key=w-secret"),
    ("a request that carries a key loses Range and If-Range",
     request(host: "api.weather.example", [("X-Api-Key", w(weather)), ("Range", "bytes=0-5"), ("If-Range", "\"e1\"")]),
     ["Range", "If-Range"], "forward Weather / Range= If-Range="),
    ("a request to a bound host without a key keeps Range, asks for identity",
     request(host: "api.weather.example", [("Range", "bytes=0-5"), ("Accept-Encoding", "gzip, br")]),
     ["Range", "Accept-Encoding"], "forward  / Range=bytes=0-5 Accept-Encoding=identity"),
    ("one of a key's several headers", request(host: "api.anthropic.example", [("x-api-key", w(anthropic))]),
     ["x-api-key"], "forward Anthropic / x-api-key=a-secret"),
    ("another of its headers, with its scheme", request(host: "api.anthropic.example", [("Authorization", "Bearer \(w(anthropic))")]),
     ["Authorization"], "forward Anthropic / Authorization=Bearer a-secret"),
    ("Basic authentication, the key's user", request(host: "github.example", [("Authorization", basic("x-access-token", w(github)))]),
     ["Authorization"], "forward GitHub / Authorization=\(basic("x-access-token", "g-secret"))"),
    ("Basic authentication, another user", request(host: "github.example", [("Authorization", basic("someone", w(github)))]),
     [], "forward  / note=placeholder of GitHub in the Authorization header, not substituted"),
    ("Basic authentication of a key without basic", request(host: "api.weather.example", [("Authorization", basic("x", w(weather)))]),
     [], "forward  / note=placeholder of Weather in a Basic Authorization header, which its metadata does not name (git: -c http.extraHeader=\"Authorization: Bearer …\"), not substituted"),
    ("a Host header for another host", ProxyRequest(method: "GET", scheme: "https", host: "api.weather.example", port: 443, target: "/",
                                                   headers: [.init("Host", "evil.example"), .init("X-Api-Key", w(weather))]),
     [], "refuse 421 -: the Host header names evil.example, the connection goes to api.weather.example"),
    ("a Host header for another port", ProxyRequest(method: "GET", scheme: "https", host: "api.weather.example", port: 443, target: "/",
                                                   headers: [.init("Host", "api.weather.example:8443")]),
     [], "refuse 421 -: its Host header names port 8443, the connection goes to 443"),
    ("two Host headers", ProxyRequest(method: "GET", scheme: "https", host: "api.weather.example", port: 443, target: "/",
                                      headers: [.init("Host", "api.weather.example"), .init("Host", "evil.example")]),
     [], "refuse 421 -: it has 2 Host headers"),
    ("SNI for another host", request(host: "api.weather.example", routing: [("SNI", "evil.example")]),
     [], "refuse 421 -: the SNI names evil.example, the connection goes to api.weather.example"),
    ("a name never matches an IP", request(host: "127.0.0.1", port: 8080, routing: [("CONNECT", "127.000.000.001")]),
     [], "refuse 421 -: the CONNECT names 127.000.000.001, the connection goes to 127.0.0.1"),
    ("names match in any case, with a final dot", request(host: "API.Weather.example", [("X-Api-Key", w(weather))], routing: [("SNI", "api.weather.example.")]),
     ["X-Api-Key"], "forward Weather / X-Api-Key=w-secret"),
    ("an upgrade that carries a key", request(host: "api.weather.example", [("Connection", "Upgrade"), ("Upgrade", "websocket"), ("X-Api-Key", w(weather))]),
     [], "refuse 403 Weather: an upgrade (WebSocket) request may not carry a key"),
    ("a value with a line break", request(host: "api.weather.example", [("X-Key", w(lineBreak))]),
     [], "refuse 403 Broken: its value holds a line break or NUL, which cannot go in a header"),
    ("no placeholder: nothing changes but hop-by-hop headers",
     request(host: "example.org", [("Connection", "close, X-Drop"), ("X-Drop", "1"), ("Proxy-Authorization", "Basic x"), ("Proxy-Connection", "keep-alive"),
                                   ("Keep-Alive", "timeout=5"), ("TE", "trailers"), ("Accept-Encoding", "gzip"), ("X-Keep", "1")]),
     ["Connection", "X-Drop", "Proxy-Authorization", "Proxy-Connection", "Keep-Alive", "TE", "Accept-Encoding", "X-Keep"],
     "forward  / Connection= X-Drop= Proxy-Authorization= Proxy-Connection= Keep-Alive= TE= Accept-Encoding=gzip X-Keep=1"),
  ]

  @Test(arguments: 0..<cases.count) func eachCase(index: Int) {
    let (what, request, headers, expected) = Self.cases[index]
    #expect(Self.summary(ProxyDecision.decide(request, bindings: Self.bindings), headers: headers) == expected, "\(what)")
  }

  @Test func neitherARefusalNorANoteQuotesAValue() {
    for (_, request, _, _) in Self.cases {
      let text: String
      switch ProxyDecision.decide(request, bindings: Self.bindings) {
      case .refuse(let refusal): text = refusal.reason
      case .forward(let forward): text = forward.notes.joined()
      }
      for binding in Self.bindings { #expect(!text.contains(binding.key.value)) }
    }
  }

  @Test func aURLTheTwoParsesDisagreeOnCarriesNoKey() {
    let ambiguous = ProxyDecision.decide(Self.request(host: "api.weather.example", target: "/a b|c", [("X-Api-Key", Self.w(Self.weather))]), bindings: Self.bindings)
    guard case .refuse(let refusal) = ambiguous else { Issue.record("\(ambiguous)"); return }
    #expect(refusal.status == 400 && refusal.key == "Weather" && refusal.reason.hasPrefix("its request's URL is ambiguous: "), "\(refusal)")
    #expect(!refusal.reason.contains(Self.weather.key.value))
    // Without a key it is the API's to answer.
    guard case .forward = ProxyDecision.decide(Self.request(host: "api.weather.example", target: "/a b|c"), bindings: Self.bindings) else {
      Issue.record("a keyless request was refused")
      return
    }
  }

  @Test func anUpgradeWithoutAKeyIsForwardedAndSaysSo() throws {
    let decision = ProxyDecision.decide(Self.request(host: "example.org", [("Connection", "Upgrade"), ("Upgrade", "websocket")]), bindings: Self.bindings)
    guard case .forward(let forward) = decision else { Issue.record("\(decision)"); return }
    #expect(forward.upgrade && forward.keys.isEmpty)
  }
}

/// Placeholders shaped like their keys, so SDKs that check a key's form
/// accept them: the public prefix kept, the rest random in each position's
/// class, at least 128 bits, else the odr_ form.
@Suite struct ShapedPlaceholderTests {
  static func key(_ value: String, env: String? = nil, prefix: String? = nil) -> APIKey {
    var metadata = KeyMetadata(env: env, header: "X-Key", hosts: ["api.example"])
    metadata.placeholder = prefix
    return APIKey(name: "K", value: value, metadata: metadata)
  }

  static func shapeClass(_ character: Character) -> String {
    character.isNumber ? "digit" : character.isUppercase ? "upper" : character.isLowercase ? "lower" : String(character)
  }

  @Test(arguments: [
    ("xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", nil, nil, "xoxb-"),
    ("sk-proj-" + String(repeating: "aB3", count: 16), nil, nil, "sk-proj-"),
    ("ghp_" + String(repeating: "Ab1", count: 12), nil, nil, "ghp_"),
    ("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "AWS_SECRET_ACCESS_KEY", nil, ""),
    ("xoxp-" + String(repeating: "z1", count: 24), nil, "xoxp-", "xoxp-"),
    ("0123456789abcdef0123456789abcdef", nil, nil, ""),
  ] as [(String, String?, String?, String)])
  func aKeyShapedPlaceholderKeepsItsPrefixLengthAndClasses(_ value: String, _ env: String?, _ prefix: String?, _ kept: String) {
    let placeholder = Placeholder(for: Self.key(value, env: env, prefix: prefix)).text
    #expect(placeholder.count == value.count && placeholder.hasPrefix(kept) && placeholder != value, "\(placeholder)")
    let hexadecimal = value.allSatisfy(\.isHexDigit)
    for (made, original) in zip(placeholder.dropFirst(kept.count), value.dropFirst(kept.count)) {
      if hexadecimal { #expect(made.isHexDigit) } else { #expect(Self.shapeClass(made) == Self.shapeClass(original), "\(placeholder)") }
    }
    #expect(Placeholder(for: Self.key(value, env: env, prefix: prefix)).text != placeholder)
  }

  @Test func anAWSAccessKeyIDKeepsItsShape() {
    let placeholder = Placeholder(for: Self.key("AKIAIOSFODNN7EXAMPLE", env: "AWS_ACCESS_KEY_ID")).text
    #expect(placeholder.count == 20 && placeholder.hasPrefix("AKIA") && placeholder.dropFirst(4).allSatisfy { "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".contains($0) })
    #expect(Placeholder(for: Self.key("ASIAIOSFODNN7EXAMPLE", env: "AWS_ACCESS_KEY_ID")).text.hasPrefix("ASIA"))
  }

  /// Too little to be random in the key's own shape (under 128 bits): the odr_ form.
  @Test(arguments: ["k-123", "abcdefghij0123456789", "AKIAIOSFODNN7EXAMPLE", String(repeating: "-", count: 64)])
  func aShortOrUniformKeyGetsTheOdrForm(_ value: String) {
    #expect(Placeholder(text: Placeholder(for: Self.key(value)).text) != nil)
  }
}

@Suite struct PlaceholderTests {
  @Test func aPlaceholderIsOdrAndThirtyTwoLettersOrDigits() {
    let made = (0..<1000).map { _ in Placeholder().text }
    #expect(Set(made).count == 1000)
    for text in made {
      #expect(text.hasPrefix("odr_") && text.count == 36)
      #expect(text.dropFirst(4).unicodeScalars.allSatisfy { ($0 >= "a" && $0 <= "z") || ($0 >= "A" && $0 <= "Z") || ($0 >= "0" && $0 <= "9") })
    }
  }
}

@Suite struct ProxyHostTests {
  @Test(arguments: [
    ("Example.COM.", "example.com", ProxyHost.Kind.name), ("[::1]", "::1", .ipv6), ("0:0:0:0:0:0:0:1", "::1", .ipv6),
    ("[::FFFF:127.0.0.1]", "::ffff:127.0.0.1", .ipv6), ("10.0.0.1", "10.0.0.1", .ipv4), ("127.000.000.001", "127.000.000.001", .name),
    ("0x7f.1", "0x7f.1", .name), ("_dmarc.example", "_dmarc.example", .name),
  ])
  func hostsInOneForm(raw: String, text: String, kind: ProxyHost.Kind) throws {
    let host = try #require(ProxyHost(raw))
    #expect(host.text == text && host.kind == kind)
  }

  @Test(arguments: ["", ".", "a b", "a..b", ".a", "[1.2.3.4]", "[::1", "exa\u{0}mple", "ex/ample", "ex@mple", "é.example"])
  func notHosts(raw: String) {
    #expect(ProxyHost(raw) == nil)
  }

  @Test(arguments: [
    ("odr_abc", "odr_abc", true), ("x odr_abc y", "odr_abc", true), ("odr_ab", "odr_abc", false), ("odr_abodr_abc", "odr_abc", true),
    ("é odr_abc", "odr_abc", true), ("", "odr_abc", false), ("odr_ab odr_ac", "odr_abc", false), ("anything", "", true),
  ])
  func holdsFindsTheBytesAnywhere(_ text: String, _ needle: String, _ expected: Bool) {
    #expect(ProxyDecision.holds(text, needle) == expected)
    #expect(ProxyDecision.holds(text[...], needle) == expected)
    #expect(text.contains(needle) == expected || needle.isEmpty)  // what it stands in for
  }

  @Test(arguments: [(" \tBearer x \t", "Bearer x"), ("x", "x"), ("  ", ""), ("", ""), (" é ", "é"), ("a b", "a b"), ("\té\u{301} ", "é\u{301}")])
  func trimmedDropsSpacesAndTabsAtBothEnds(_ text: String, _ expected: String) {
    #expect(ProxyDecision.trimmed(text[...]) == expected)
  }
}
