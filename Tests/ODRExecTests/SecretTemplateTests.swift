import ODRBase
import ODRExec
import Testing
import ODRTesting

/// `odr://` references and `odr inject` templates, parsed in-process.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(1))) struct SecretTemplateTests {
  @Test func referencesHaveOneOrTwoParts() throws {
    let short = try SecretReference("odr://Weather")
    #expect(short.service == nil && short.key == "Weather")
    let long = try SecretReference("odr://com.example.app/maps.v2")
    #expect(long.service == "com.example.app" && long.key == "maps.v2" && long.description == "odr://com.example.app/maps.v2")
    for bad in ["Weather", "odr://", "odr://a/b/c", "odr://Weather Key", "odr:///Weather", "odr://svc/"] {
      #expect(throws: ExecError.self, "\(bad)") { try SecretReference(bad) }
    }
  }

  @Test func aTemplateRendersItsReferencesAndLiteralBraces() throws {
    let template = try SecretTemplate(path: "t", text: "a: {{ odr://Weather }}\nb: {{odr://svc.example/Maps}} {{\"{{\"}} c }}\n")
    #expect(template.references.map { "\($0.reference)@\($0.place)" } == ["odr://Weather@t:1:4", "odr://svc.example/Maps@t:2:4"])
    let values = [try SecretReference("odr://Weather"): "w", try SecretReference("odr://svc.example/Maps"): "m"]
    #expect(template.render(values) == "a: w\nb: m {{ c }}\n")
  }

  @Test(arguments: [
    ("x {{ nope }}", "t:1:3: expected a reference"),
    ("ok\n  {{ odr://Weather", "t:2:3: this {{ is never closed"),
    ("{{ odr://a/b/c }}", "t:1:1: a reference is odr://KEY or odr://SERVICE/KEY"),
  ])
  func templateErrorsNameTheirPlace(text: String, message: String) {
    let error = #expect(throws: ExecError.self) { try SecretTemplate(path: "t", text: text) }
    #expect(error?.message.hasPrefix(message) == true, "\(error?.message ?? "")")
  }
}
