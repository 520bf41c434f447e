import ODRBase
import Foundation
import ODRCatalog
import ODRPublishing
import ODRResources
import ODRTesting
import ODRSigning
import ODRTrust
import Testing

/// `odr publish`'s order: interrupted at any step, the destination still
/// serves a catalog that loads, verifies and has its blobs.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct PublicationTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-publication-\(UUID().uuidString)")
  let key = SigningKey()

  /// A folder destination that fails the upload of `failing`.
  struct Interrupted: PublishDestination {
    let folder: FolderDestination
    let failing: String
    var name: String { folder.name }
    func size(of path: String) async throws -> Int64? { try await folder.size(of: path) }
    func read(_ path: String, limit: Int) async throws -> Data? { try await folder.read(path, limit: limit) }
    func upload(_ file: URL, sha256: String, to path: String, cacheControl: String) async throws {
      if path == failing { throw CancellationError() }
      try await folder.upload(file, sha256: sha256, to: path, cacheControl: cacheControl)
    }
    func upload(_ data: Data, to path: String, cacheControl: String) async throws {
      if path == failing { throw CancellationError() }
      try await folder.upload(data, to: path, cacheControl: cacheControl)
    }
    func delete(_ path: String) async throws { try await folder.delete(path) }
    func blobs() async throws -> [String] { try await folder.blobs() }
  }

  /// Packs version `version` (its level file says which) signed by `key`.
  func pack(_ version: Int) async throws -> URL { try await pack(version, into: "out\(version)") }

  /// ``pack(_:)`` into the folder `name`, allowing `nextSigners` to sign
  /// the next versions, expiring at `expires`.
  func pack(_ version: Int, into name: String, nextSigners: [VerifyingKey] = [], expires: Date? = nil) async throws -> URL {
    let source = root.appending(path: "src\(version)")
    try FileManager.default.createDirectory(at: source.appending(path: "levels"), withIntermediateDirectories: true)
    try Data("level of version \(version)".utf8).write(to: source.appending(path: "levels/1.txt"))
    try Data(#"{"bundle": "com.example.pub", "version": \#(version), "tags": {"L": {"category": "onDemand", "files": ["levels/"]}}}"#.utf8)
      .write(to: source.appending(path: "tags.json"))
    var options = PackOptions()
    options.signingKeys = [key]
    options.nextSigners = nextSigners
    options.expires = expires
    let output = root.appending(path: name)
    _ = try await Publisher(source: source).pack(to: output, options: options)
    return output
  }

  /// Loads the destination as a client that trusts `key` and reads tag L.
  func read(_ destination: URL, client: String) async throws -> (version: Int, text: String) {
    let catalog = try await ResourceCatalog.load(from: destination, cacheHome: root.appending(path: "\(client)/cache"),
                                                 trust: TrustPolicy(pinned: [key.verifyingKey], stateHome: root.appending(path: "\(client)/state")))
    let request = try ResourceRequest(tags: ["L"], catalog: catalog)
    try await request.beginAccessing()
    defer { request.endAccessing() }
    return (catalog.catalog.version, try String(contentsOf: request.url(forResource: "levels/1.txt"), encoding: .utf8))
  }

  @Test(arguments: ["blobs", "catalog.json.sig", "catalog.json"])
  func anInterruptedPublishLeavesTheOldCatalogValid(_ failing: String) async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let destination = root.appending(path: "www")
    let first = try await Publication(folder: try pack(1), destination: FolderDestination(destination))
    try await first.run()
    #expect(try await read(destination, client: "before").version == 1)
    let versionOne = try Data(contentsOf: destination.appending(path: "catalog.json"))
    let second = try await pack(2)
    let blob = try #require(FileManager.default.contentsOfDirectory(atPath: second.appending(path: "blobs").path).first)
    let broken = Interrupted(folder: FolderDestination(destination), failing: failing == "blobs" ? "blobs/\(blob)" : failing)
    await #expect(throws: CancellationError.self) { try await Publication(folder: second, destination: broken).run() }
    // A client that never saw version 2 still reads version 1, signature and all.
    let seen = try await read(destination, client: "during-\(failing)")
    #expect(seen.version == 1 && seen.text == "level of version 1")
    // Run again to completion: version 2, with only its new blob uploaded.
    let retry = try await Publication(folder: second, destination: FolderDestination(destination))
    #expect(retry.steps.filter { $0.action == .upload }.map(\.path) == (failing == "blobs" ? ["blobs/\(blob)"] : []) + ["catalog.json.sig", "catalog.json"])
    try await retry.run()
    let after = try await read(destination, client: "after-\(failing)")
    #expect(after.version == 2 && after.text == "level of version 2")
    // The bridge stays until the next publish: a client that read version
    // 1's catalog.json just before the publish still finds its signature.
    let signature = try CatalogSignature(parsing: Data(contentsOf: destination.appending(path: "catalog.json.sig")))
    #expect(signature.entries.count == 2)
    #expect(signature.signers(of: versionOne, format: 2) == [key.verifyingKey])
    #expect(signature.signers(of: try Data(contentsOf: destination.appending(path: "catalog.json")), format: 2) == [key.verifyingKey])
  }

  /// --prune: after a week of packs, the host holds the blobs of the
  /// catalog published and of the one before it, no others; a client of
  /// either still reads.
  @Test func pruningKeepsTheBlobsOfTheNewAndThePreviousCatalogOnly() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let destination = root.appending(path: "www")
    for version in 1...3 { try await Publication(folder: try pack(version), destination: FolderDestination(destination)).run() }
    try Data("not a blob".utf8).write(to: destination.appending(path: "blobs/README"))
    #expect(try await FolderDestination(destination).blobs().count == 3)
    let plan = try await Publication(folder: try pack(4), destination: FolderDestination(destination), prune: true)
    let blobOf = { (version: Int) throws -> String in
      try Catalog.decode(Data(contentsOf: self.root.appending(path: "out\(version)/catalog.json"))).tags["L"]!.files[0].sha256
    }
    #expect(plan.pruned.map(\.path).sorted() == [try blobOf(1), try blobOf(2)].map { "blobs/\($0)" }.sorted())
    try await plan.run()
    #expect(try await FolderDestination(destination).blobs().sorted() == [try blobOf(3), try blobOf(4)].sorted())
    #expect(FileManager.default.fileExists(atPath: destination.appending(path: "blobs/README").path))  // not a blob: left alone
    #expect(try await read(destination, client: "a").version == 4)
  }

  @Test func theBridgeHoldsThePublishedCatalogsLinesOnlyAndDoesNotGrow() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let destination = root.appending(path: "www")
    for version in 1...4 { try await Publication(folder: try pack(version), destination: FolderDestination(destination)).run() }
    let signature = try CatalogSignature(parsing: Data(contentsOf: destination.appending(path: "catalog.json.sig")))
    #expect(signature.entries.count == 2)  // version 4's line and version 3's
    #expect(signature.signers(of: try Data(contentsOf: root.appending(path: "out3/catalog.json")), format: 2) == [key.verifyingKey])
  }

  /// Red team 18: two publishes of one catalog into one folder shared a
  /// temporary name per blob, so one renamed or deleted the other's
  /// half-written file.
  @Test func twoPublishesIntoOneFolderAtOnceBothSucceed() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let source = root.appending(path: "big")
    try FileManager.default.createDirectory(at: source.appending(path: "levels"), withIntermediateDirectories: true)
    for index in 0..<8 { try Data(repeating: UInt8(index), count: 2 << 20).write(to: source.appending(path: "levels/\(index).bin")) }
    try Data(#"{"bundle": "com.example.pub", "version": 1, "tags": {"L": {"category": "onDemand", "files": ["levels/"]}}}"#.utf8)
      .write(to: source.appending(path: "tags.json"))
    let folder = root.appending(path: "out-big")
    _ = try await Publisher(source: source).pack(to: folder, options: PackOptions())
    for round in 0..<3 {
      let destination = root.appending(path: "www\(round)")
      try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<2 {
          group.addTask { try await Publication(folder: folder, destination: FolderDestination(destination)).run() }
        }
        try await group.waitForAll()
      }
      let leftovers = try FileManager.default.contentsOfDirectory(atPath: destination.appending(path: "blobs").path).filter { $0.hasPrefix(".") }
      #expect(leftovers.isEmpty)
    }
  }

  /// `odr publish` applies the client's rule of which form a signature
  /// takes: a format-2 catalog whose only line is in format 1's form (which
  /// every client refuses) is refused before anything is uploaded.
  @Test func aSignatureInAnotherFormatsFormIsRefused() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let folder = try await pack(1)
    let bytes = try Data(contentsOf: folder.appending(path: "catalog.json"))
    #expect(try Catalog.decode(bytes).formatVersion == 2)
    try CatalogSignature(signing: bytes, with: [key], format: 1).encoded.write(to: folder.appending(path: "catalog.json.sig"))
    let destination = root.appending(path: "www")
    let error = await #expect(throws: ResourceError.self) { try await Publication(folder: folder, destination: FolderDestination(destination)) }
    #expect(error?.message.contains("in the form of its format (2)") == true, "\(error?.message ?? "")")
    #expect(!FileManager.default.fileExists(atPath: destination.path))
  }

  /// The publisher asks the client's decision: the signer of the published
  /// version may re-serve that version (re-signed to extend it) even after
  /// handing the next versions over — clients accept it, and publish used
  /// to refuse it (its own reach started from the next signers only) — and
  /// a signer nobody hands over to is refused with the clients' reason.
  @Test func publishAcceptsWhatClientsAcceptAndRefusesWhatTheyRefuse() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let next = SigningKey()
    let destination = root.appending(path: "www")
    try await Publication(folder: try pack(5, into: "first", nextSigners: [next.verifyingKey]), destination: FolderDestination(destination)).run()
    let extended = try await pack(5, into: "extended", nextSigners: [next.verifyingKey], expires: Date().addingTimeInterval(200 * 86_400))
    try await Publication(folder: extended, destination: FolderDestination(destination)).run()
    #expect(try await read(destination, client: "after-extension").version == 5)
    // Version 6 by the same key, carrying the chain: handed over to `next`, so clients refuse it.
    let stray = root.appending(path: "stray")
    try FileManager.default.copyItem(at: extended, to: stray)
    var catalog = try Catalog.decode(Data(contentsOf: stray.appending(path: "catalog.json")))
    catalog.version = 6
    try catalog.encoded().write(to: stray.appending(path: "catalog.json"))
    try CatalogSignature(signing: catalog.encoded(), with: key).encoded.write(to: stray.appending(path: "catalog.json.sig"))
    let error = await #expect(throws: ResourceError.self) { try await Publication(folder: stray, destination: FolderDestination(destination)) }
    #expect(error?.message.contains("Clients that accepted the catalog published at") == true, "\(error?.message ?? "")")
  }

  @Test func aFolderMissingABlobIsRefusedBeforeAnythingIsUploaded() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let folder = try await pack(1)
    let blob = try #require(FileManager.default.contentsOfDirectory(atPath: folder.appending(path: "blobs").path).first)
    try FileManager.default.removeItem(at: folder.appending(path: "blobs/\(blob)"))
    let destination = root.appending(path: "www")
    await #expect(throws: ResourceError.self) { try await Publication(folder: folder, destination: FolderDestination(destination)) }
    #expect(!FileManager.default.fileExists(atPath: destination.path))
  }
}
