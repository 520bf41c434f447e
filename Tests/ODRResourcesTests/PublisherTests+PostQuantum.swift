import ODRBase
import Foundation
import ODRCatalog
import ODRPublishing
import ODRSigning
import Testing

/// What `odr pack` refuses to sign because every client would refuse it,
/// once post-quantum keys are in play — each before anything is written.
extension PublisherTests {
  static let old = SigningKey(), pq = try! SigningKey(postQuantum: true)

  func pack(_ folder: Folder, version: Int, with keys: [SigningKey], next: [VerifyingKey] = [], newTrustRoot: Bool = false) async throws {
    var options = plain
    options.signingKeys = keys
    options.nextSigners = next
    options.newTrustRoot = newTrustRoot
    try await Publisher(source: folder.root).pack(to: folder.output, version: version, options: options)
  }

  @Test func theMoveToPostQuantumPacksAndTheWayBackIsRefused() async throws {
    let folder = try makeSUT()
    defer { folder.remove() }
    try folder.tags(#"{"bundle": "com.example.pq", "tags": {"Onboarding": {"category": "initial", "files": ["Onboarding/"]}}}"#)
    try await pack(folder, version: 1, with: [Self.old])
    try await pack(folder, version: 2, with: [Self.old, Self.pq])
    let two = try Catalog.decode(Data(contentsOf: folder.output.appending(path: "catalog.json")))
    #expect(two.formatVersion == 3 && two.signers == [Self.old.verifyingKey, Self.pq.verifyingKey])
    #expect(two.handovers?.last?.signedBy == Self.old.verifyingKey)
    let written = try Data(contentsOf: folder.output.appending(path: "catalog.json"))
    // Ed25519 alone after a post-quantum catalog: refused, nothing written.
    let back = try await #require(throws: ResourceError.self) { try await pack(folder, version: 3, with: [Self.old]) }
    #expect(back.message.contains("signed post-quantum"), "\(back.message)")
    #expect(try Data(contentsOf: folder.output.appending(path: "catalog.json")) == written)
    // Post-quantum, handing the next versions to Ed25519 keys only: refused.
    let next = try await #require(throws: ResourceError.self) { try await pack(folder, version: 3, with: [Self.old, Self.pq], next: [Self.old.verifyingKey]) }
    #expect(next.message.contains("are all Ed25519 keys"), "\(next.message)")
    try await pack(folder, version: 3, with: [Self.pq])
    // A new trust root may go back, with a warning (clients must reset).
    try await pack(folder, version: 4, with: [Self.old], newTrustRoot: true)
  }

  @Test func moreSignatureLinesThanClientsReadAreRefused() async throws {
    let folder = try makeSUT()
    defer { folder.remove() }
    let keys = try (0..<5).map { _ in try SigningKey(postQuantum: true) }
    let error = try await #require(throws: ResourceError.self) { try await pack(folder, version: 1, with: keys) }
    #expect(error.message.contains("over what clients read"), "\(error.message)")
    #expect(!FileManager.default.fileExists(atPath: folder.output.appending(path: "catalog.json").path))
    try await pack(folder, version: 1, with: Array(keys.prefix(4)) + [SigningKey(), SigningKey()])
  }
}
