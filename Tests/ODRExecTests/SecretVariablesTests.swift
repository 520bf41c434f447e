@testable import ODRExec
import ODRBase
import ODRKeyFormat
import Testing
import ODRTesting

@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(1))) struct SecretVariablesTests {
  @Test(arguments: [
    ("Weather", "WEATHER"), ("mapsKey", "MAPS_KEY"), ("OpenAIKey", "OPEN_AI_KEY"), ("geo.v2-key", "GEO_V2_KEY"),
    ("API_KEY", "API_KEY"), ("key2", "KEY2"), ("S3Bucket", "S3_BUCKET"), ("a..b", "A_B"),
  ])
  func upperSnakeCase(name: String, variable: String) {
    #expect(SecretVariables.upperSnakeCase(name) == variable)
  }

  @Test func envMetadataWinsAndOrderIsByVariable() throws {
    let variables = try SecretVariables(keys: [
      APIKey(name: "Weather", value: "w", metadata: KeyMetadata(env: "AAA_WEATHER")),
      APIKey(name: "maps", value: "m"),
    ])
    #expect(variables.variables.map(\.name) == ["AAA_WEATHER", "MAPS"])
    #expect(variables.variables.map(\.key) == ["Weather", "maps"])
  }

  @Test func collisionsAreRefusedNamingBothKeysNeverValues() {
    let error = #expect(throws: ExecError.self) {
      try SecretVariables(keys: [APIKey(name: "maps.key", value: "secret-one"), APIKey(name: "MapsKey", value: "secret-two")])
    }
    #expect(error?.code == .invalidVariable)
    #expect(error?.message.contains("MAPS_KEY") == true)
    #expect(error?.message.contains("secret-") == false)
  }

  @Test(arguments: ["PATH", "LD_PRELOAD", "ld_library_path", "BASH_ENV", "BASH_FUNC_x%%", "1ABC", "A-B", ""])
  func reservedOrInvalidVariablesAreRefused(env: String) {
    #expect(throws: ExecError.self) { try SecretVariables(keys: [APIKey(name: "K", value: "v", metadata: KeyMetadata(env: env))]) }
  }

  @Test func onlySelectsAndUnknownNamesAreNotFound() throws {
    let keys = [APIKey(name: "A", value: "1"), APIKey(name: "B", value: "2")]
    #expect(try SecretVariables(keys: keys, only: ["B", "B"]).variables.map(\.name) == ["B"])
    let error = #expect(throws: ExecError.self) { try SecretVariables(keys: keys, only: ["C"]) }
    #expect(error?.code == .notFound)
    #expect((#expect(throws: ExecError.self) { try SecretVariables(keys: []) })?.code == .notFound)
  }

  /// A refusal names the reference and the rule it broke (the bundle id
  /// and key name rules of ODRBase, which the keyring applies too).
  @Test func aBadReferenceKeepsTheRuleItBroke() {
    let service = #expect(throws: ExecError.self) { try SecretReference("odr://bad service/Weather") }
    #expect(service?.code == .invalidInput)
    #expect(service?.message.contains("odr://bad service/Weather") == true && service?.message.contains("Invalid service 'bad service'") == true, "\(service?.message ?? "")")
    let key = #expect(throws: ExecError.self) { try SecretReference("odr://com.example.demo/_odr.metadata") }
    #expect(key?.message.contains("reserved for odr's own records") == true, "\(key?.message ?? "")")
  }
}
