import Foundation
import ODRResources
import ODRBase
import Testing
import ODRTesting

@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(1))) struct StrictJSONTests {
  @Test(arguments: [
    (#"{"a": 1, "a": 2}"#, "a", [String]()),
    (#"{"x": {"k": 1, "k": 2}}"#, "k", ["x"]),
    (#"{"x": [{"k": 1}, {"j": 1, "j": 2}]}"#, "j", ["x", "[]"]),
    (#"{"\u0061": 1, "a": 2}"#, "a", []),
  ])
  func findsDuplicates(json: String, key: String, path: [String]) {
    let found = StrictJSON.firstDuplicateKey(in: Data(json.utf8))
    #expect(found?.key == key)
    #expect(found?.path == path)
  }

  @Test(arguments: [
    #"{"a": 1, "b": {"a": 2}}"#,
    #"[{"a": 1}, {"a": 2}]"#,
    #"{"a": "\"a\": 1", "b": "a"}"#,
    #"{"a": ["a", "a"]}"#,
    #"not json"#,
  ])
  func acceptsUniqueKeys(json: String) {
    #expect(StrictJSON.firstDuplicateKey(in: Data(json.utf8)) == nil)
  }
}
