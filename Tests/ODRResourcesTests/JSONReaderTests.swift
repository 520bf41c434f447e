import Foundation
import ODRBase
@testable import ODRCatalog
import ODRConfiguration
import ODRKeyFormat
@testable import ODRPublishing
import ODRTesting
@testable import ODRTrust
import Testing

/// odr's one JSON reader, and every document read through it: bounded
/// (no input ends the process), one meaning per key, positions.
@Suite(.enabled(if: TestSelection.untagged)) struct JSONReaderTests {
  static func nested(_ depth: Int, in unknownField: Bool = true) -> [UInt8] {
    let deep = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    return Array(#"{"formatVersion": 2, "bundle": "b.c", "version": 1, "tags": {}, "x": \#(deep)}"#.utf8)
  }

  @Test(arguments: [
    (#"{"a": 1, "a": 2}"#, "a", "the top level"),
    (#"{"x": {"k": 1, "k": 2}}"#, "k", "x"),
    (#"{"x": [{"k": 1}, {"j": 1, "j": 2}]}"#, "j", "x.[]"),
    (#"{"\u0061": 1, "a": 2}"#, "a", "the top level"),
  ])
  func refusesDuplicateKeysNamingTheirObject(json: String, key: String, object: String) {
    #expect(throws: JSONReader.Failure.self) { try JSONReader.keys(of: Array(json.utf8), limit: 1 << 20) }
    do { _ = try JSONReader.keys(of: Array(json.utf8), limit: 1 << 20) } catch {
      #expect(error.kind == .duplicateKey(key, in: object))
    }
  }

  @Test(arguments: [#"{"a": 1, "b": {"a": 2}}"#, #"[{"a": 1}, {"a": 2}]"#, #"{"a": "\"a\": 1", "b": "a"}"#, #"{"a": ["a", "a"]}"#])
  func acceptsUniqueKeys(json: String) throws {
    try JSONReader.check(Array(json.utf8), limit: 1 << 20)
  }

  @Test func nestsAtMost64Deep() throws {
    let ok = Array((String(repeating: "[", count: 64) + String(repeating: "]", count: 64)).utf8)
    try JSONReader.check(ok, limit: 1 << 20)
    let deep = Array((String(repeating: "[", count: 65) + String(repeating: "]", count: 65)).utf8)
    #expect(throws: JSONReader.Failure(.tooDeep, at: 64, "nested deeper than 64 levels")) { try JSONReader.check(deep, limit: 1 << 20) }
  }

  @Test func refusesMoreBytesThanItsLimitBeforeReading() {
    #expect { try JSONReader.check(Array("[1, 2]".utf8), limit: 5) } throws: { ($0 as? JSONReader.Failure)?.kind == .tooLarge }
  }

  @Test(arguments: [
    ("{\n  \"a\": 1,\n  oops\n}", 3, 3, "expected a key in double quotes"),
    ("[1,]", 1, 4, "expected a value"),
    ("\"\\x\"", 1, 2, "expected an escape"),
    ("[01]", 1, 2, "expected a number"),
    ("[1] x", 1, 5, "expected the end of the document"),
  ])
  func namesWhereItStopped(json: String, line: Int, column: Int, message: String) {
    do {
      try JSONReader.check(Array(json.utf8), limit: 1 << 20)
      Issue.record("accepted \(json)")
    } catch {
      let position = JSONReader.position(of: error.offset, in: Array(json.utf8))
      #expect(position == (line, column), "\(error.message)")
      #expect(error.message.hasPrefix(message))
    }
  }

  /// The finding: 200,000 nested `[` inside an unknown field ended odr
  /// with SIGSEGV before trust was judged. Every reader now refuses it.
  @Test func deepNestingIsRefusedByEveryDocumentReader() throws {
    let deep = Self.nested(200_000)
    #expect(throws: ResourceError.self) { try Catalog.decode(Data(deep)) }
    #expect(throws: ResourceError.self) { try CatalogHeader.read(Data(deep)) }
    let config = Array(#"{"catalog": "x", "endpoint": \#(String(repeating: "[", count: 200_000))}"#.utf8)
    #expect(throws: ConfigurationError.self) { try ProjectFile.parse(config, file: "odr.json") }
    let tags = Data(#"{"bundle": "b", "tags": {}, "x": \#(String(repeating: "[", count: 200_000))}"#.utf8)
    #expect(throws: ResourceError.self) { try PublisherManifest.decode(tags) }
    let keys = Data(#"{"Weather": "k", "x": \#(String(repeating: "{\"a\":", count: 100_000))}"#.utf8)
    #expect(throws: KeysError.self) { try APIKeysDocument.parse(keys) }
  }

  @Test func aDeepStateFileIsUnreadableNotACrash() throws {
    let folder = FileManager.default.temporaryDirectory.appending(path: "odr-json-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let ledger = TrustLedger(bundle: "com.example.deep", stateHome: folder)
    try FileManager.default.createDirectory(at: folder.appending(path: "odr/com.example.deep"), withIntermediateDirectories: true)
    try Data(Self.nested(100_000)).write(to: folder.appending(path: "odr/com.example.deep/trust.json"))
    #expect { try ledger.state() } throws: { ($0 as? ResourceError)?.code == .unreadableState }
  }

  @Test func theHeaderDigestIgnoresOnlyTheExpiryValue() throws {
    let a = try CatalogHeader.read(Data(#"{"formatVersion": 2, "bundle": "b.c", "version": 3, "expires": "2030-01-01T00:00:00Z", "tags": {}}"#.utf8))
    let b = try CatalogHeader.read(Data(#"{"formatVersion": 2, "bundle": "b.c", "version": 3, "expires": "2031-06-01T00:00:00Z", "tags": {}}"#.utf8))
    let c = try CatalogHeader.read(Data(#"{"formatVersion": 2, "bundle": "b.c", "version": 3, "expires": "2030-01-01T00:00:00Z", "tags": {"T": null}}"#.utf8))
    #expect(a.digest == b.digest)
    #expect(a.digest != c.digest)
  }
}
