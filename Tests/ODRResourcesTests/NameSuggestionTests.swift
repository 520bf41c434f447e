import ODRBase
import Testing

/// "Did you mean": the closest name within two edits, or one the typed
/// name begins; among equals, the one it begins.
@Suite struct NameSuggestionTests {
  @Test(arguments: [
    ("stat", ["set", "get", "status"], "status"),
    ("fecth", ["fetch", "exec", "env"], "fetch"),
    ("Weathr", ["Maps", "Weather"], "Weather"),
    ("--verison", ["--help", "--version"], "--version"),
    ("sig", ["sign", "signing-key"], "sign"),
    ("zzzz", ["set", "get"], nil),
  ] as [(String, [String], String?)])
  func suggests(_ typed: String, _ known: [String], _ expected: String?) {
    #expect(NameSuggestion.closest(to: typed, among: known) == expected)
  }
}
