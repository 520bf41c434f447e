import ODRBase
import Foundation
import ODRCatalog
import ODRPublishing
import ODRResources
import ODRTesting
import ODRSigning
import ODRTrust
import Testing

/// Verify, then parse (DESIGN §3.2): a signed catalog whose bytes changed is
/// refused before anything decodes it.
@Suite(.enabled(if: TestSelection.untagged)) struct VerifyBeforeParseTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-vbp-\(UUID().uuidString)")

  func signedFolder() async throws -> URL {
    let source = root.appending(path: "src")
    try FileManager.default.createDirectory(at: source.appending(path: "levels"), withIntermediateDirectories: true)
    try Data("one".utf8).write(to: source.appending(path: "levels/1.txt"))
    try Data(#"{"bundle": "com.example.vbp", "tags": {"L": {"category": "onDemand", "files": ["levels/"]}}}"#.utf8)
      .write(to: source.appending(path: "tags.json"))
    var options = PackOptions()
    options.signingKeys = [SigningKey()]
    let output = root.appending(path: "out")
    try await Publisher(source: source).pack(to: output, options: options)
    return output
  }

  /// Loads `folder` counting the catalogs decoded meanwhile.
  func load(_ folder: URL) async -> (decodes: Int, error: (any Error)?) {
    let spy = Catalog.DecodeSpy()
    let client = root.appending(path: "client-\(UUID().uuidString)")
    do {
      try await Catalog.$decodeSpy.withValue(spy) {
        _ = try await ResourceCatalog.load(from: folder, cacheHome: client.appending(path: "cache"),
                                           trust: TrustPolicy(stateHome: client.appending(path: "state")))
      }
      return (spy.decodes, nil)
    } catch {
      return (spy.decodes, error)
    }
  }

  @Test func aChangedByteIsRefusedBeforeTheDecoderSeesIt() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let folder = try await signedFolder()
    let good = await load(folder)
    #expect(good.error == nil && good.decodes >= 1)  // the spy sees decodes
    let file = folder.appending(path: "catalog.json")
    var bytes = try Data(contentsOf: file)
    let at = try #require(bytes.firstRange(of: Data("\"version\" : 1".utf8))).upperBound - 1
    bytes[at] = UInt8(ascii: "7")
    try bytes.write(to: file)
    let tampered = await load(folder)
    #expect((tampered.error as? ResourceError)?.code == .integrity, "\(String(describing: tampered.error))")
    #expect(tampered.decodes == 0)
  }
}
