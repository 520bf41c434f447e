import Foundation
import ODRCatalog
import ODRPublishing
import ODRResources
import ODRTesting
import ODRTransports
import ODRSigning
import ODRTrust
import Synchronization
import Testing

/// A mirror whose catalog is refused — not JSON odr reads (200,000 nested
/// `[`), or a valid older version — is skipped like a damaged one: the next
/// mirror serves, and nothing served ends the process.
@Suite(.enabled(if: TestSelection.untagged)) struct MirrorRefusalTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-mirror-\(UUID().uuidString)")

  func pack(version: Int, into name: String, key: SigningKey) async throws -> URL {
    let source = root.appending(path: "src")
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    try Data("one".utf8).write(to: source.appending(path: "1.txt"))
    try Data(#"{"bundle": "com.example.mirrors", "tags": {"L": {"category": "onDemand", "files": ["1.txt"]}}}"#.utf8)
      .write(to: source.appending(path: "tags.json"))
    var options = PackOptions()
    options.signingKeys = [key]
    let output = root.appending(path: name)
    try await Publisher(source: source).pack(to: output, version: version, options: options)
    return output
  }

  func load(_ folders: [URL], key: SigningKey) async throws -> (ResourceCatalog, [String]) {
    let notices = Mutex<[String]>([])
    let transport = MirrorTransport(folders.map { .init(folder: $0, transport: FileTransport()) }) { line in notices.withLock { $0.append(line) } }
    let catalog = try await ResourceCatalog.load(from: folders[0], cacheHome: root.appending(path: "cache"), transport: transport,
                                                 trust: TrustPolicy(pinned: [key.verifyingKey], stateHome: root.appending(path: "state")))
    return (catalog, notices.withLock { $0 })
  }

  @Test func aMirrorServingDeeplyNestedJSONIsSkipped() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let key = SigningKey()
    let good = try await pack(version: 2, into: "good", key: key)
    let bad = root.appending(path: "bad")
    try FileManager.default.createDirectory(at: bad, withIntermediateDirectories: true)
    let deep = String(repeating: "[", count: 200_000)
    try Data(#"{"formatVersion": 2, "bundle": "com.example.mirrors", "version": 9, "tags": {}, "x": \#(deep)"#.utf8)
      .write(to: bad.appending(path: "catalog.json"))
    let (catalog, notices) = try await load([bad, good], key: key)
    #expect(catalog.catalog.version == 2)
    #expect(notices.count == 1 && notices[0].contains("mirror \(bad.absoluteString)"), "\(notices)")
  }

  @Test func aMirrorServingAValidOlderCatalogIsSkipped() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let key = SigningKey()
    let good = try await pack(version: 3, into: "good", key: key)
    _ = try await load([good], key: key)
    let old = try await pack(version: 2, into: "old", key: key)
    let (catalog, notices) = try await load([old, good], key: key)
    #expect(catalog.catalog.version == 3)
    #expect(notices.count == 1, "\(notices)")
  }
}
