import ODRBase
import Foundation
import ODRAge
import ODRCatalog
import ODRPublishing
import ODRTesting
import ODRSigning
import Synchronization
import Testing

@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(1))) struct PublisherTests {
  /// A publisher folder in a fresh temporary directory.
  struct Folder {
    let root: URL
    init() throws {
      root = FileManager.default.temporaryDirectory.appending(path: "odr-pack-\(UUID().uuidString)")
      try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }
    func write(_ path: String, _ text: String) throws {
      let url = root.appending(path: path)
      try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try Data(text.utf8).write(to: url)
    }
    func tags(_ json: String) throws { try write("tags.json", json) }
    var output: URL { root.deletingLastPathComponent().appending(path: root.lastPathComponent + "-out") }
    func remove() { try? FileManager.default.removeItem(at: root); try? FileManager.default.removeItem(at: output) }
  }

  /// Secrets tags published without recipients, as the older tests expect.
  var plain: PackOptions {
    var options = PackOptions()
    options.plaintextSecrets = true
    return options
  }

  func makeSUT() throws -> Folder {
    let folder = try Folder()
    try folder.write("APIKeys.json", #"{"Weather": "k-123"}"#)
    try folder.write("Onboarding/welcome.txt", "hello")
    try folder.write("Onboarding/deep/more.txt", "more")
    try folder.write("levels/2/map.json", "{}")
    try folder.write("shared.txt", "shared")
    try folder.tags("""
      { "bundle": "com.example.demo", "version": 3, "tags": {
        "APIKeys": { "category": "prefetch", "order": 0, "secrets": true, "files": ["APIKeys.json"] },
        "Onboarding": { "category": "initial", "files": ["Onboarding/", "shared.txt"] },
        "Level2": { "category": "onDemand", "preservationPriority": 0.2, "files": ["levels/2/", "shared.txt"] } } }
      """)
    return folder
  }

  @Test func packWritesCatalogAndContentAddressedBlobs() async throws {
    let folder = try makeSUT()
    defer { folder.remove() }
    let catalog = try await Publisher(source: folder.root).pack(to: folder.output, options: plain)
    #expect(catalog.version == 3)
    #expect(catalog.tags["Onboarding"]?.files.map(\.path) == ["Onboarding/deep/more.txt", "Onboarding/welcome.txt", "shared.txt"])
    #expect(catalog.tags["Level2"]?.preservationPriority == 0.2)
    #expect(catalog.tags["APIKeys"]?.secrets == true)
    let welcome = try #require(catalog.tags["Onboarding"]?.files.first { $0.path == "Onboarding/welcome.txt" })
    // sha256("hello")
    #expect(welcome.sha256 == "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")
    #expect(welcome.size == 5)
    let blob = try Data(contentsOf: folder.output.appending(path: "blobs/\(welcome.sha256)"))
    #expect(String(decoding: blob, as: UTF8.self) == "hello")
    // A file in two tags is stored once.
    let blobs = try FileManager.default.contentsOfDirectory(atPath: folder.output.appending(path: "blobs").path)
    #expect(blobs.count == 5)
    let decoded = try Catalog.decode(Data(contentsOf: folder.output.appending(path: "catalog.json")))
    #expect(decoded == catalog)
  }

  @Test func packingTwiceIsByteIdentical() async throws {
    let folder = try makeSUT()
    defer { folder.remove() }
    try await Publisher(source: folder.root).pack(to: folder.output, options: plain)
    let first = try Data(contentsOf: folder.output.appending(path: "catalog.json"))
    try FileManager.default.removeItem(at: folder.output)
    try await Publisher(source: folder.root).pack(to: folder.output, options: plain)
    #expect(try Data(contentsOf: folder.output.appending(path: "catalog.json")) == first)
  }

  @Test func versionFlagOverridesTagsJSON() async throws {
    let folder = try makeSUT()
    defer { folder.remove() }
    let nine = try await Publisher(source: folder.root).pack(to: folder.output, version: 9, options: plain)
    #expect(nine.version == 9)
  }

  @Test(arguments: [
    (#"{"bundle":"b","tags":{"T":{"category":"sometimes","files":["shared.txt"]}}}"#, "tags.json:1:28: tag 'T' has unknown category 'sometimes'"),
    (#"{"bundle":"b","tags":{"T":{"category":"initial","files":["nope.txt"]}}}"#, "'nope.txt', which is not in"),
    (#"{"bundle":"b","tags":{"T":{"category":"initial","files":["../etc/passwd"]}}}"#, "unsafe path"),
    (#"{"bundle":"b","tags":{"T":{"category":"initial","files":["/etc/passwd"]}}}"#, "unsafe path"),
    (#"{"bundle":"b","tags":{"bad tag":{"category":"initial","files":["shared.txt"]}}}"#, "Invalid tag name"),
    (#"{"bundle":"b","tags":{"Tag":{"category":"initial","files":["shared.txt"]},"tag":{"category":"initial","files":["shared.txt"]}}}"#, "differ only in case"),
    (#"{"bundle":"b","tags":{"T":{"category":"initial","files":["shared.txt"],"preservationPriorty":1}}}"#, "tags.json:1:72: unknown field 'preservationPriorty'"),
    (#"{"bundle":"b","tags":{"T":{"category":"initial","preservationPriority":2,"files":["shared.txt"]}}}"#, "tags.json:1:49: tag 'T' has preservationPriority 2.0; it must be between 0 and 1"),
    (#"{"bundle":"b c","tags":{}}"#, "tags.json:1:2: bundle 'b c' is not a bundle id"),
    (#"not json"#, "tags.json:1:1: expected a value"),
    ("{\n  \"bundle\": \"b\",\n  \"tags\": {\"T\": {\"category\": \"initial\", \"files\": [\"shared.txt\"],}}\n}", "tags.json:3:65: expected a key in double quotes"),
    (#"{"bundle":"b","tags":{"T":{"category":"initial","files":"shared.txt"}}}"#, "tags.json:1:49: not valid: wrong type at tags.T.files"),
    (#"{"bundle":"b","tag":{}}"#, "tags.json:1:15: unknown field 'tag' in the top level. Did you mean 'tags'?"),
    (#"{"bundle":"b","tags":{"T":{"category":"initial","files":["shared.txt"]},"T":{"category":"initial","files":["shared.txt"]}}}"#, "tags.json:1:73: 'T' appears twice in tags"),
    (#"{"bundle":"b","tags":{"T":{"category":"initial","files":["shared.txt"]},"\u0054":{"category":"initial","files":["shared.txt"]}}}"#, "'T' appears twice"),
  ])
  func badSourceIsRefusedBeforeAnythingIsWritten(tagsJSON: String, expected: String) async throws {
    let folder = try makeSUT()
    defer { folder.remove() }
    try folder.tags(tagsJSON)
    do {
      try await Publisher(source: folder.root).pack(to: folder.output, options: plain)
      Issue.record("packed a bad folder")
    } catch let error as ResourceError {
      #expect(error.message.contains(expected), "\(error.message)")
    }
    #expect(!FileManager.default.fileExists(atPath: folder.output.path))
  }

  @Test func symlinksAreRefused() async throws {
    let folder = try makeSUT()
    defer { folder.remove() }
    try FileManager.default.createSymbolicLink(atPath: folder.root.appending(path: "Onboarding/link.txt").path, withDestinationPath: "/etc/hostname")
    do {
      try await Publisher(source: folder.root).pack(to: folder.output, options: plain)
      Issue.record("packed a symlink")
    } catch let error as ResourceError {
      #expect(error.message.contains("symlink"))
    }
  }

  @Test(arguments: ["../x", "/abs", "a/../b", "a//b", "./a", ""])
  func catalogsWithUnsafePathsAreRefused(path: String) throws {
    let catalog = Catalog(bundle: "b", version: 1, tags: ["T": .init(category: .initial, files: [
      .init(path: path, size: 1, sha256: String(repeating: "a", count: 64))])])
    #expect(throws: ResourceError.self) { try Catalog.decode(catalog.encoded()) }
  }

  @Test(arguments: ["", "ABCDEF", String(repeating: "A", count: 64), String(repeating: "g", count: 64)])
  func catalogsWithMalformedHashesAreRefused(hash: String) throws {
    let catalog = Catalog(bundle: "b", version: 1, tags: ["T": .init(category: .initial, files: [
      .init(path: "a", size: 1, sha256: hash)])])
    #expect(throws: ResourceError.self) { try Catalog.decode(catalog.encoded()) }
  }

  @Test func secretsTagsAreEncryptedToTheirRecipientsAndTheCatalogIsSigned() async throws {
    let folder = try makeSUT()
    defer { folder.remove() }
    let (identity, key) = (AgeIdentity(), SigningKey())
    var options = PackOptions()
    options.recipients = [identity.recipient]
    options.signingKeys = [key]
    let catalog = try await Publisher(source: folder.root).pack(to: folder.output, options: options)
    let file = try #require(catalog.tags["APIKeys"]?.files.first)
    #expect(catalog.tags["APIKeys"]?.encryption == Catalog.Encryption(recipients: 1))
    let blob = try Data(contentsOf: folder.output.appending(path: "blobs/\(file.sha256)"))
    #expect(!String(decoding: blob, as: UTF8.self).contains("k-123"))
    #expect(try Age.decrypt(blob, identities: [identity]) == Data(#"{"Weather": "k-123"}"#.utf8))
    let bytes = try Data(contentsOf: folder.output.appending(path: "catalog.json"))
    let signature = try CatalogSignature(parsing: Data(contentsOf: folder.output.appending(path: "catalog.json.sig")))
    #expect(signature.signers(of: bytes, format: 2) == [key.verifyingKey])
    #expect(catalog.signers == [key.verifyingKey])
    let expires = try #require(catalog.expires)
    #expect(abs(expires.timeIntervalSinceNow - 90 * 86_400) < 60)
  }

  @Test func aSecretsTagWithoutRecipientsIsRefusedBeforeAnythingIsWritten() async throws {
    let folder = try makeSUT()
    defer { folder.remove() }
    await #expect(throws: ResourceError.self) { try await Publisher(source: folder.root).pack(to: folder.output) }
    #expect(!FileManager.default.fileExists(atPath: folder.output.path))
  }

  @Test func anInvalidSecretsDocumentIsRefusedBeforeAnythingIsWritten() async throws {
    let folder = try makeSUT()
    defer { folder.remove() }
    var options = PackOptions()
    options.recipients = [AgeIdentity().recipient]
    options.validateSecrets = { path, _ in throw ResourceError(.invalidSource, "\(path) is broken") }
    let error = await #expect(throws: ResourceError.self) { try await Publisher(source: folder.root).pack(to: folder.output, options: options) }
    #expect(error?.message == "APIKeys.json is broken")
    #expect(!FileManager.default.fileExists(atPath: folder.output.path))
  }

  @Test func aSecretsFileInAnotherTagIsRefused() async throws {
    let folder = try makeSUT()
    defer { folder.remove() }
    try folder.tags("""
      { "bundle": "com.example.demo", "tags": {
        "APIKeys": { "category": "prefetch", "secrets": true, "files": ["APIKeys.json"] },
        "Everything": { "category": "onDemand", "files": ["APIKeys.json"] } } }
      """)
    await #expect(throws: ResourceError.self) { try await Publisher(source: folder.root).pack(to: folder.output, options: plain) }
  }

  @Test func anAPIKeysFileInATagThatIsNotSecretIsPackedWithAWarning() async throws {
    let folder = try makeSUT()
    defer { folder.remove() }
    try folder.write("config/apikeys.json", #"{"Weather": "k-123"}"#)
    try folder.tags("""
      { "bundle": "com.example.demo", "tags": {
        "Config": { "category": "initial", "files": ["config/"] },
        "Onboarding": { "category": "initial", "files": ["Onboarding/"] } } }
      """)
    let notices = Mutex<[String]>([])
    var options = PackOptions()
    options.notify = { notice in notices.withLock { $0.append(notice) } }
    try await Publisher(source: folder.root).pack(to: folder.output, options: options)
    #expect(notices.withLock { $0 } == [
      "warning: 'config/apikeys.json' is in 'Config', which is not a secrets tag: it is published in plaintext, as any file. If it holds API keys, put it in a tag with \"secrets\": true (and recipients).",
    ])
  }
}
