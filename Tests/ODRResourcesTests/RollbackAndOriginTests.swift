import Foundation
import ODRBase
import ODRCatalog
import ODRPublishing
import ODRTesting
import Testing

/// Issue 37, 4 and 5: publishers cannot roll back by mistake; one Origin
/// decides "this machine" by address; a URL's query never reaches messages.
@Suite(.enabled(if: TestSelection.untagged)) struct RollbackAndOriginTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-rollback-\(UUID().uuidString)")

  func source(bundle: String = "com.example.rollback", text: String = "one") throws -> URL {
    let source = root.appending(path: "src-\(bundle)-\(text)")
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    try Data(text.utf8).write(to: source.appending(path: "1.txt"))
    try Data(#"{"bundle": "\#(bundle)", "tags": {"L": {"category": "onDemand", "files": ["1.txt"]}}}"#.utf8).write(to: source.appending(path: "tags.json"))
    return source
  }

  @Test func packRefusesAVersionBelowThePreviousOne() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let output = root.appending(path: "out")
    try await Publisher(source: try source()).pack(to: output, version: 8)
    await #expect { try await Publisher(source: try source()).pack(to: output, version: 5) } throws: {
      ($0 as? ResourceError)?.code == .integrity && ($0 as? ResourceError)?.message.contains("--catalog-version 9") == true
    }
    #expect(try Catalog.decode(Data(contentsOf: output.appending(path: "catalog.json"))).version == 8)
  }

  @Test(arguments: [(5, "one", "com.example.rollback", "lower than version 8"), (8, "two", "com.example.rollback", "already published"),
                    (9, "one", "com.example.other", "holds the catalog of com.example.rollback")])
  func publishRefusesWhatClientsWouldRefuse(version: Int, text: String, bundle: String, message: String) async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let live = root.appending(path: "live")
    let first = root.appending(path: "first")
    try await Publisher(source: try source()).pack(to: first, version: 8)
    _ = try await Publication(folder: first, destination: FolderDestination(live)).run()
    let next = root.appending(path: "next")
    try await Publisher(source: try source(bundle: bundle, text: text)).pack(to: next, version: version)
    await #expect { _ = try await Publication(folder: next, destination: FolderDestination(live)) } throws: {
      ($0 as? ResourceError)?.code == .integrity && ($0 as? ResourceError)?.message.contains(message) == true
    }
  }

  @Test(arguments: [("127.0.0.1", true), ("127.1.2.3", true), ("::1", true), ("[::1]", true), ("::ffff:127.0.0.1", true), ("localhost", true),
                    ("127.attacker.example", false), ("x.localhost", false), ("localhost.attacker.example", false), ("128.0.0.1", false),
                    ("127.0.0.1.nip.io", false), ("0x7f000001", false), ("::2", false)])
  func loopbackIsDecidedByAddress(host: String, loopback: Bool) {
    #expect(Origin.isLoopback(host) == loopback)
  }

  @Test func aURLsQueryNeverReachesAMessage() throws {
    let url = try #require(URL(string: "https://acct.blob.example/odr/catalog.json?sv=2024&sig=SECRETSAS#frag"))
    #expect(url.redacted == "https://acct.blob.example/odr/catalog.json?…")
    #expect(URL(string: "https://cdn.example/odr/catalog.json")?.redacted == "https://cdn.example/odr/catalog.json")
  }
}
