import Foundation
import ODRKeyFormat
@testable import ODRExec
import ODRProxy
import Testing

@Suite struct ProxyEnvironmentTests {
  static let keys = [
    APIKey(name: "Weather", value: "w-secret", metadata: KeyMetadata(header: "X-Api-Key", hosts: ["api.weather.example"])),
    APIKey(name: "mapsKey", value: "m-secret", metadata: KeyMetadata(env: "MAPS", query: "key", hosts: ["maps.example", "127.0.0.1:8080"])),
    APIKey(name: "Loose", value: "l-secret", metadata: KeyMetadata(header: "X-Key")),
  ]
  static let base = [
    "PATH": "/usr/bin", "HOME": "/home/a", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1/bus", "XDG_RUNTIME_DIR": "/run/user/1",
    "SSH_AUTH_SOCK": "/tmp/ssh", "GNOME_KEYRING_CONTROL": "/run/user/1/keyring", "ODR_SERVICE": "com.example", "ODR_IDENTITY": "AGE-SECRET-KEY-1X",
    "NO_PROXY": "localhost, .weather.example,maps.example:443,*,127.0.0.1,[::1],other.example", "WEATHER": "stale",
    "SSL_CERT_FILE": "/etc/ssl/mine.pem",
  ]

  func environment() throws -> (ProxyEnvironment, [String: String]) {
    let made = try ProxyEnvironment(keys: Self.keys, base: Self.base, port: 4567, token: "T0ken", caBundle: "/run/odr/ca.pem")
    let variables = Dictionary(uniqueKeysWithValues: made.variables.map { line in
      let parts = line.split(separator: "=", maxSplits: 1)
      return (String(parts[0]), String(parts[1]))
    })
    return (made, variables)
  }

  @Test func keysArePlaceholdersAndUnboundKeysAreLeftOutWithOneLine() throws {
    let (made, env) = try environment()
    let placeholders = Dictionary(uniqueKeysWithValues: made.bindings.map { ($0.key.name, $0.placeholder.text) })
    #expect(env["WEATHER"] == placeholders["Weather"] && env["MAPS"] == placeholders["mapsKey"])
    #expect(env["LOOSE"] == nil && placeholders["Loose"] == nil)
    #expect(made.warning == "odr: left out Loose: it names no hosts, so no request may carry it.")
    for key in Self.keys { #expect(!made.variables.contains { $0.contains(key.value) }) }
  }

  @Test func anInheritedVariableHoldingAKeysValueIsLeftOut() throws {
    var base = Self.base
    base["OPENAI_API_KEY"] = "w-secret"
    base["DEPLOY_URL"] = "https://x.example/?k=l-secret"
    base["UNRELATED"] = "w-"
    let made = try ProxyEnvironment(keys: Self.keys, base: base, port: 1, token: "t", caBundle: "/b")
    #expect(made.withheldVariables == ["DEPLOY_URL", "OPENAI_API_KEY"])
    for key in Self.keys { #expect(!made.variables.contains { $0.contains(key.value) }, "\(key.name)") }
    #expect(made.variables.contains("UNRELATED=w-"))
  }

  @Test func noWayToTheKeyringOrOdrsOwnSettings() throws {
    let (_, env) = try environment()
    for name in ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "SSH_AUTH_SOCK", "GNOME_KEYRING_CONTROL", "ODR_SERVICE", "ODR_IDENTITY"] {
      #expect(env[name] == nil, "\(name)")
    }
    #expect(env["PATH"] == "/usr/bin" && env["HOME"] == "/home/a")
  }

  @Test func everyClientFindsTheProxyAndTheBundle() throws {
    let (_, env) = try environment()
    for name in ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"] { #expect(env[name] == "http://odr:T0ken@127.0.0.1:4567") }
    #expect(env["NODE_USE_ENV_PROXY"] == "1")
    for name in ProxyEnvironment.caBundleVariables { #expect(env[name] == "/run/odr/ca.pem", "\(name)") }
  }

  @Test func noProxyKeepsOnlyWhatNoKeyIsBoundTo() throws {
    let (_, env) = try environment()
    #expect(env["NO_PROXY"] == "localhost,[::1],other.example")
    #expect(env["no_proxy"] == nil)
  }

  @Test func noProxyDropsWhatASuffixEntryCovers() {
    let aws = ProxyBinding(key: APIKey(name: "AWS", value: "v", metadata: KeyMetadata(header: "X", hosts: [".amazonaws.com"])))
    #expect(ProxyEnvironment.noProxy("s3.amazonaws.com,.amazonaws.com,amazonaws.com,com,other.example,notamazonaws.com", without: [aws])
            == "other.example,notamazonaws.com")
  }
}

@Suite struct ProxyCredentialsTests {
  static func basic(_ text: String) -> String { "Basic " + Data(text.utf8).base64EncodedString() }

  @Test(arguments: [
    (basic("odr:T0ken"), true), ("basic " + Data("odr:T0ken".utf8).base64EncodedString(), true),
    (basic("odr:T0ke"), false), (basic("odr:T0kenX"), false), (basic("odr:t0ken"), false), (basic("root:T0ken"), false),
    (basic(""), false), ("Bearer T0ken", false), ("Basic !!!", false), ("", false),
    (basic("odr:T0ken" + String(repeating: "x", count: 256)), false), (basic("odr:T0ken" + String(repeating: "x", count: 512)), false),
  ])
  func onlyTheRunsTokenPasses(header: String, accepted: Bool) {
    #expect(ProxyCredentials(token: "T0ken").accepts(header) == accepted)
  }

  @Test func noHeaderIsRefusedAndATokenIsLettersAndDigits() {
    #expect(!ProxyCredentials(token: "T0ken").accepts(nil))
    let token = ProxyCredentials().token
    #expect(token.count == 32 && token.allSatisfy { $0.isLetter || $0.isNumber } && token != ProxyCredentials().token)
  }
}

@Suite struct ProxyAuditRecordTests {
  @Test func oneLineWithThePathOnlyAndControlCharactersEscaped() throws {
    let record = ProxyAuditRecord(time: Date(timeIntervalSince1970: 0), keys: ["Weather"], method: "GET", host: "api.weather.example",
                                  target: "/v1/x\u{1b}[2J\ny?key=odr_secretplaceholder", status: 200, refusal: nil, process: "curl (/usr/bin/curl)")
    let line = record.line
    #expect(line.hasSuffix("}\n") && line.dropLast().allSatisfy { $0 != "\n" })
    #expect(!line.contains("key=") && !line.contains("\u{1b}"))
    let decoded = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
    #expect(decoded?["path"] as? String == "/v1/x\u{1b}[2J\ny" && decoded?["time"] as? String == "1970-01-01T00:00:00Z")
    #expect(decoded?["keys"] as? [String] == ["Weather"] && decoded?["status"] as? Int == 200)
    let refused = ProxyAuditRecord(time: Date(timeIntervalSince1970: 0), keys: [], method: "CONNECT", host: "", target: "a\"b\\c\u{7f}\t",
                                   status: 407, refusal: "no \"token\"", process: nil).line
    let fields = try JSONSerialization.jsonObject(with: Data(refused.utf8)) as? [String: Any]
    #expect(fields?["path"] as? String == "a\"b\\c\u{7f}\t" && fields?["refusal"] as? String == "no \"token\"" && fields?["process"] == nil)
  }

  @Test(arguments: [(0.0, "1970-01-01T00:00:00Z"), (951_782_400, "2000-02-29T00:00:00Z"), (1_795_737_600.9, "2026-11-27T00:00:00Z"),
                    (4_107_542_399, "2100-02-28T23:59:59Z"), (-1, "1969-12-31T23:59:59Z")])
  func timesInUTC(seconds: Double, text: String) {
    #expect(ProxyAuditRecord.iso8601(Date(timeIntervalSince1970: seconds)) == text)
    #expect(Date(timeIntervalSince1970: seconds.rounded(.down)).formatted(.iso8601) == text)
  }
}
