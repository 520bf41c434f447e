import ODRBase
import Foundation
import ODRKeyFormat
import Testing
import ODRTesting

@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(1))) struct APIKeysDocumentTests {
  /// A value that must never show up in an error message.
  static let secret = "sk-live-DO-NOT-LEAK-9f8e7d"

  func parse(_ json: String) throws -> APIKeysDocument {
    try APIKeysDocument.parse(Data(json.replacingOccurrences(of: "SECRET", with: Self.secret).utf8))
  }

  @Test func parsesTheFlatForm() throws {
    let document = try parse(#"{"Weather": "k-123", "Maps": "k-456"}"#)
    #expect(document.keys.map(\.name) == ["Maps", "Weather"])
    #expect(document["Weather"]?.value == "k-123")
    #expect(document["Weather"]?.metadata.isEmpty == true)
  }

  @Test func parsesTheExtendedFormWithMetadata() throws {
    let document = try parse("""
      { "keys": {
        "Weather": { "value": "k-123", "env": "WEATHER_API_KEY", "header": "Authorization", "scheme": "Bearer",
                     "hosts": ["api.weather.example", "10.0.0.1"] },
        "Maps": { "value": "k-456", "query": "key", "hosts": ["maps.example"] },
        "Plain": { "value": "k-789" } } }
      """)
    let weather = try #require(document["Weather"])
    #expect(weather.value == "k-123")
    #expect(weather.metadata == KeyMetadata(env: "WEATHER_API_KEY", header: "Authorization", scheme: "Bearer",
                                            hosts: ["api.weather.example", "10.0.0.1"]))
    #expect(document["Maps"]?.metadata.query == "key")
    #expect(document["Plain"]?.metadata.isEmpty == true)
  }

  /// `hosts` entries may name a port (plain http goes only to named
  /// ports); `placeholder` names the prefix `odr exec --proxy` keeps.
  @Test func hostsMayNameAPortAndAPlaceholderPrefixIsKept() throws {
    let document = try parse(#"{"keys": {"Slack": {"value": "xoxb-1", "header": "Authorization", "hosts": ["localhost:8080", "slack.com"], "placeholder": "xoxb-"}}}"#)
    #expect(document["Slack"]?.metadata.hosts == ["localhost:8080", "slack.com"] && document["Slack"]?.metadata.placeholder == "xoxb-")
    for bad in [#""hosts": ["localhost:0"]"#, #""hosts": ["localhost:"]"#, #""placeholder": "has space""#, #""placeholder": """#] {
      #expect(throws: KeysError.self, "\(bad)") { try parse(#"{"keys": {"K": {"value": "v", \#(bad)}}}"#) }
    }
  }

  @Test func aFlatKeyNamedKeysWithAStringValueStaysFlat() throws {
    #expect(try parse(#"{"keys": "k-1"}"#)["keys"]?.value == "k-1")
  }

  @Test func valuesKeepUnicodeQuotesAndNewlines() throws {
    let document = try parse(#"{"K": "a \"quoted\"\nline ключ 🔑"}"#)
    #expect(document["K"]?.value == "a \"quoted\"\nline ключ 🔑")
  }

  @Test(arguments: [
    ("not json SECRET", "not JSON"),
    (#"["SECRET"]"#, "must be a JSON object"),
    (#""SECRET""#, "must be a JSON object"),
    (#"{}"#, "holds no keys"),
    (#"{"keys": {}}"#, "holds no keys"),
    (#"{"Weather": "SECRET", "Weather": "other"}"#, "'Weather' appears twice"),
    (#"{"keys": {"Weather": {"value": "SECRET", "value": "x"}}}"#, "'value' appears twice of key 'Weather'"),
    (#"{"1Weather": "SECRET"}"#, "Invalid key name '1Weather'"),
    (#"{"bad name": "SECRET"}"#, "Invalid key name 'bad name'"),
    (#"{"Weather": ""}"#, "is empty"),
    (#"{"Weather": 42}"#, "must be a string, not a number"),
    (#"{"Weather": null}"#, "must be a string, not null"),
    (#"{"Weather": ["SECRET"]}"#, "must be a string, not an array"),
    (#"{"keys": {"Weather": "SECRET"}}"#, "each key is an object"),
    (#"{"keys": {"Weather": {"env": "X"}}}"#, "\"value\" field is missing"),
    (#"{"keys": {"Weather": {"value": "SECRET", "colour": "red"}}}"#, "unknown field 'colour'"),
    (#"{"keys": {"Weather": {"value": "SECRET"}}, "extra": 1}"#, "Unknown top-level field 'extra'"),
    (#"{"keys": {"Weather": {"value": "SECRET", "env": "1BAD"}}}"#, "\"env\" must be an environment variable name"),
    (#"{"keys": {"Weather": {"value": "SECRET", "header": "SECRET value"}}}"#, "\"header\" must be an HTTP header name"),
    (#"{"keys": {"Weather": {"value": "SECRET", "header": "X-Key", "query": "key"}}}"#, "not both"),
    (#"{"keys": {"Weather": {"value": "SECRET", "scheme": "Bearer"}}}"#, "needs a \"header\""),
    (#"{"keys": {"Weather": {"value": "SECRET", "hosts": []}}}"#, "non-empty array"),
    (#"{"keys": {"Weather": {"value": "SECRET", "hosts": ["https://api.example"]}}}"#, "must be a host name"),
    (#"{"keys": {"Weather": {"value": "SECRET", "hosts": ["SECRET"]}}}"#, "must be a host name"),
    (#"{"keys": {"Weather": {"value": "SECRET", "query": 3}}}"#, "\"query\" must be a query parameter name"),
  ])
  func invalidDocumentsNameTheProblemButNeverAValue(json: String, expected: String) throws {
    do {
      _ = try parse(json)
      Issue.record("accepted an invalid document")
    } catch let error as KeysError {
      #expect(error.code == .invalidDocument)
      #expect(error.message.contains(expected), "\(error.message)")
      #expect(error.message.contains("Nothing was imported"))
      #expect(!error.description.contains(Self.secret))
    }
  }

  @Test func oversizedValueIsRefusedByName() throws {
    let huge = String(repeating: "s", count: 64 * 1024 + 1)
    do {
      _ = try APIKeysDocument.parse(Data(#"{"Big": "\#(huge)", "Fine": "ok"}"#.utf8))
      Issue.record("accepted a value over 64 KiB")
    } catch {
      #expect(error.message.contains("'Big'"))
      #expect(error.message.contains("65536"))
    }
  }

  @Test func keysNeverShowTheirValueInDescriptionsOrDumps() throws {
    let key = try #require(try parse(#"{"Weather": "SECRET"}"#)["Weather"])
    var dumped = ""
    dump(key, to: &dumped)
    for text in [key.description, key.debugDescription, String(describing: key), String(reflecting: key), "\(key)", dumped] {
      #expect(!text.contains(Self.secret), "\(text)")
    }
  }

  @Test func aMalformedDocumentNeverEchoesAStringFromIt() {
    let document = #"{"Weather": "sk-live-9", "sk-live-9": "x", "sk-live-9": "y""#  // no closing brace
    let error = #expect(throws: KeysError.self) { try APIKeysDocument.parse(Data(document.utf8)) }
    #expect(error?.message.contains("sk-live-9") == false)
    #expect(error?.message.contains("not JSON") == true)
  }
}
