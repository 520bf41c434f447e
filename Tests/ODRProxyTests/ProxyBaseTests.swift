import ODRKeyFormat
@testable import ODRProxy
import Testing

/// `--proxy-base NAME=URL`, the routes under the run's token, and the
/// other pure checks the server applies around the decision.
@Suite struct ProxyBaseTests {
  @Test(arguments: [
    ("OPENAI=https://api.openai.com/v1", "OPENAI https api.openai.com 443 /v1"),
    ("API=http://127.0.0.1:8080/", "API http 127.0.0.1 8080 "),
    ("V6=https://[::1]:8443/a/b//", "V6 https ::1 8443 /a/b"),
    ("A_1=HTTPS://Example.COM", "A_1 https example.com 443 "),
    ("openai=https://x", "error: openai: a base's name is upper case letters, digits and _ (it becomes NAME_BASE_URL)"),
    ("1API=https://x", "error: 1API: a base's name is upper case letters, digits and _ (it becomes NAME_BASE_URL)"),
    ("API", "error: expected NAME=URL, e.g. OPENAI=https://api.openai.com/v1"),
    ("API=ftp://x", "error: ftp://x: a base URL starts with https:// (or http://)"),
    ("API=https://u:p@x", "error: https://u:p@x: a base URL has no user, query or fragment"),
    ("API=https://x/?q=1", "error: https://x/?q=1: a base URL has no user, query or fragment"),
    ("API=https://x:0", "error: https://x:0: no valid host and port"),
    ("API=https://bad host", "error: https://bad host: no valid host and port"),
  ])
  func parse(_ argument: String, _ expected: String) {
    switch ProxyBase.parse(argument) {
    case .success(let base): #expect("\(base.name) \(base.scheme) \(base.host.text) \(base.port) \(base.path)" == expected)
    case .failure(let error): #expect("error: \(error.message)" == expected)
    }
  }

  static let bases = [try! ProxyBase.parse("API=https://api.example/v1").get(), try! ProxyBase.parse("APIX=https://x.example").get()]  // valid literals

  @Test(arguments: [
    ("/T0ken/API/chat?x=1", "API /v1/chat?x=1"),
    ("/T0ken/API", "API /v1/"),
    ("/T0ken/API?x=1", "API /v1/?x=1"),
    ("/T0ken/APIX/a", "APIX /a"),
    ("/T0ken/APIY/a", "none"),
    ("/T0ken/api/a", "none"),
    ("/T0ke/API/a", "none"),
    ("/T0kenX/API/a", "none"),
    ("/API/a", "none"),
    ("T0ken/API", "none"),
    ("/T0ken", "none"),
  ])
  func route(_ target: String, _ expected: String) {
    let routed = ProxyBase.route(target, token: "T0ken", bases: Self.bases)
    #expect(routed.map { "\($0.base.name) \($0.target)" } ?? "none" == expected)
  }

  @Test func theLocalURLCarriesTheToken() {
    #expect(Self.bases[0].localURL(port: 4567, token: "T0ken") == "http://127.0.0.1:4567/T0ken/API")
    #expect(Self.bases[0].variable == "API_BASE_URL")
  }

  /// A body is never rewritten: each placeholder in it goes on as it is,
  /// named once in a note (an LLM conversation that quotes them, say).
  @Test func aBodyWithPlaceholdersGoesOnAsItIsWithANoteForEach() {
    let key = ProxyBinding(key: APIKey(name: "Weather", value: "w", metadata: KeyMetadata(header: "X-Key", hosts: ["a.example"])))
    let other = ProxyBinding(key: APIKey(name: "Maps", value: "m", metadata: KeyMetadata(query: "key", hosts: ["a.example"])))
    let placeholder = key.placeholder.text
    for (body, noted) in [("", []), ("{\"k\": \"\(placeholder)\"}", ["Weather"]), ("x" + placeholder + placeholder, ["Weather"]),
                          (String(placeholder.dropLast()), []), ("odr_" + String(repeating: "A", count: 32), []),
                          ("\(other.placeholder.text)\(placeholder)", ["Weather", "Maps"])] as [(String, [String])] {
      let notes = ProxyDecision.bodyNotes(Array(body.utf8), bindings: [key, other])
      #expect(notes == noted.map { "placeholder of \($0) in the body, not substituted" }, "\(body)")
    }
  }

  @Test func theTokenAloneIsAcceptedWhole() {
    let credentials = ProxyCredentials(token: "T0ken")
    #expect(credentials.acceptsToken("T0ken"))
    for wrong in ["", "T0ke", "T0kenX", "t0ken", "T0ken" + String(repeating: "x", count: 256)] { #expect(!credentials.acceptsToken(wrong)) }
  }
}
