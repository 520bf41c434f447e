import ODRBase
import Foundation
import ODRCatalog
import ODRPublishing
import ODRResources
import ODRTesting
import ODRTransports
import ODRTrust
import Synchronization
import Testing

/// Requests against `file://` catalogs packed by the test, into a store in
/// a temporary cache home.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct ResourceRequestTests {
  struct Fixture {
    let root = FileManager.default.temporaryDirectory.appending(path: "odr-req-\(UUID().uuidString)")
    var source: URL { root.appending(path: "src") }
    var published: URL { root.appending(path: "pub") }
    var cache: URL { root.appending(path: "cache") }
    var storeRoot: URL { cache.appending(path: "odr/com.example.test") }

    func write(_ path: String, _ data: Data) throws {
      let url = source.appending(path: path)
      try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try data.write(to: url)
    }

    @discardableResult
    func publish(version: Int = 1) async throws -> Catalog {
      try await Publisher(source: source).pack(to: published, version: version)
    }

    func load(transport: any BlobTransport = FileTransport()) async throws -> ResourceCatalog {
      try await ResourceCatalog.load(from: published, cacheHome: cache, transport: transport,
                                     trust: TrustPolicy(stateHome: root.appending(path: "state")))
    }

    func files(in folder: String) -> [String] {
      (try? FileManager.default.contentsOfDirectory(atPath: storeRoot.appending(path: folder).path)) ?? []
    }

    func remove() { try? FileManager.default.removeItem(at: root) }
  }

  /// 3 MB in a 256-byte period (byte i is i × 31 mod 256), made once: a
  /// per-byte closure over 3 M elements costs a debug build ~0.4 s of a
  /// cooperative-pool thread each time.
  static let bigFile: Data = {
    let period = Data((0..<256).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    var data = Data(capacity: 3_000_000 + 256)
    while data.count < 3_000_000 { data.append(period) }
    return data.prefix(3_000_000)
  }()

  func makeSUT() async throws -> Fixture {
    let fixture = Fixture()
    try fixture.write("tags.json", Data("""
      { "bundle": "com.example.test", "tags": {
        "A": { "category": "initial", "files": ["a.txt", "shared.txt"] },
        "B": { "category": "onDemand", "files": ["big.bin", "shared.txt"] } } }
      """.utf8))
    try fixture.write("a.txt", Data("alpha".utf8))
    try fixture.write("shared.txt", Data("shared".utf8))
    try fixture.write("big.bin", Self.bigFile)
    try await fixture.publish()
    return fixture
  }

  /// Through the library too, a secrets tag published in plaintext never
  /// becomes a file: requests refuse it and prefetch skips it.
  @Test func aPlaintextSecretsTagIsNeverCached() async throws {
    let fixture = Fixture()
    defer { fixture.remove() }
    try fixture.write("tags.json", Data("""
      { "bundle": "com.example.test", "tags": {
        "APIKeys": { "category": "prefetch", "secrets": true, "files": ["APIKeys.json"] },
        "A": { "category": "initial", "files": ["a.txt"] } } }
      """.utf8))
    try fixture.write("APIKeys.json", Data(#"{"Weather": "w-secret-1"}"#.utf8))
    try fixture.write("a.txt", Data("alpha".utf8))
    var options = PackOptions()
    options.plaintextSecrets = true
    try await Publisher(source: fixture.source).pack(to: fixture.published, options: options)
    let catalog = try await fixture.load()
    let error = #expect(throws: ResourceError.self) { try ResourceRequest(tags: ["APIKeys"], catalog: catalog) }
    #expect(error?.code == .secretsTag)
    let report = await catalog.prefetch()
    #expect(report.entries.map { "\($0.tag) \($0.outcome)" } == ["A downloaded", "APIKeys skipped"])
    #expect(fixture.files(in: "blobs").count == 1)
  }

  @Test func aLibraryRequestPinsWithALeaseThatPurgeSpares() async throws {
    let fixture = try await makeSUT()
    defer { fixture.remove() }
    let catalog = try await fixture.load()
    var request: ResourceRequest? = try ResourceRequest(tags: ["B"], catalog: catalog)
    try await request?.beginAccessing()
    try await request?.beginAccessing()  // a second begin of the same request pins once
    #expect(try catalog.store.pins.leases().map(\.tag) == ["B"])
    #expect(try catalog.store.pins.leases().first?.pid == getpid())
    let other = try ResourceRequest(tags: ["A"], catalog: catalog)
    #expect(other.conditionallyBeginAccessing() == false)  // not on disk: no pin left behind
    #expect(try catalog.store.pins.leases().map(\.tag) == ["B"])
    // Purging everything unpinned keeps B's files; A's go.
    try await ResourceRequest(tags: ["A"], catalog: catalog).beginAccessing()
    let plan = try await catalog.store.purge(catalog: catalog.catalog, budget: nil, all: true, dryRun: false)
    #expect(plan.removals.map(\.tag) == ["A"])
    #expect(try Data(contentsOf: request!.url(forResource: "big.bin")).count == 3_000_000)
    // Ending access (or letting the request go) gives the lease back.
    request = nil
    #expect(try catalog.store.pins.leases().isEmpty)
  }

  @Test func beginInstallsVerifiedPrivateFiles() async throws {
    let fixture = try await makeSUT()
    defer { fixture.remove() }
    let request = try ResourceRequest(tags: ["A"], catalog: try await fixture.load())
    try await request.beginAccessing()
    let url = try request.url(forResource: "a.txt")
    #expect(try String(contentsOf: url, encoding: .utf8) == "alpha")
    let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
    #expect((attributes[.posixPermissions] as? Int) == 0o600)
    let store = try FileManager.default.attributesOfItem(atPath: fixture.storeRoot.path)
    #expect((store[.posixPermissions] as? Int) == 0o700)
    #expect(fixture.files(in: "blobs").count == 2)
    #expect(fixture.files(in: "partial").isEmpty)
  }

  @Test func aBlobSharedByTwoTagsIsFetchedOnce() async throws {
    let fixture = try await makeSUT()
    defer { fixture.remove() }
    let counting = CountingTransport()
    let catalog = try await fixture.load(transport: counting)
    try await ResourceRequest(tags: ["A"], catalog: catalog).beginAccessing()
    try await ResourceRequest(tags: ["B"], catalog: catalog).beginAccessing()
    #expect(counting.streams == 3)  // a.txt, shared.txt, big.bin
    #expect(fixture.files(in: "blobs").count == 3)
  }

  @Test func concurrentRequestsDownloadEachBlobOnce() async throws {
    let fixture = try await makeSUT()
    defer { fixture.remove() }
    let counting = CountingTransport()
    let catalog = try await fixture.load(transport: counting)
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<8 {
        group.addTask { try await ResourceRequest(tags: ["A", "B"], catalog: catalog).beginAccessing() }
      }
      try await group.waitForAll()
    }
    #expect(counting.streams == 3)
  }

  /// Seed 004's race: conditional begins at once on one request take one
  /// lease, and one endAccessing() gives it back.
  @Test func concurrentConditionalBeginsTakeOneLease() async throws {
    let fixture = try await makeSUT()
    defer { fixture.remove() }
    let catalog = try await fixture.load()
    try await ResourceRequest(tags: ["A"], catalog: catalog).beginAccessing()  // on disk, then let go
    #expect(try catalog.store.pins.leases().isEmpty)
    let request = try ResourceRequest(tags: ["A"], catalog: catalog)
    DispatchQueue.concurrentPerform(iterations: 8) { _ in
      #expect(request.conditionallyBeginAccessing())
    }
    #expect(try catalog.store.pins.leases().count == 1)
    request.endAccessing()
    #expect(try catalog.store.pins.leases().isEmpty)
  }

  @Test func conditionalBeginNeverDownloads() async throws {
    let fixture = try await makeSUT()
    defer { fixture.remove() }
    let catalog = try await fixture.load()
    let request = try ResourceRequest(tags: ["A"], catalog: catalog)
    #expect(request.conditionallyBeginAccessing() == false)
    #expect(fixture.files(in: "blobs").isEmpty)
    try await request.beginAccessing()
    request.endAccessing()
    #expect(request.conditionallyBeginAccessing() == true)
  }

  @Test func unknownTagIsNotFound() async throws {
    let fixture = try await makeSUT()
    defer { fixture.remove() }
    let catalog = try await fixture.load()
    #expect(throws: ResourceError.self) { try ResourceRequest(tags: ["A", "Nope"], catalog: catalog) }
  }

  @Test func endedRequestsHandOutNoURLs() async throws {
    let fixture = try await makeSUT()
    defer { fixture.remove() }
    let catalog = try await fixture.load()
    try await withResources(tags: ["A"], catalog: catalog) { request in
      #expect(throws: Never.self) { try request.url(forResource: "a.txt") }
    }
    let request = try ResourceRequest(tags: ["A"], catalog: catalog)
    #expect(throws: ResourceError.self) { try request.url(forResource: "a.txt") }
  }

  @Test(arguments: ["flip", "truncate", "extend"])
  func aTamperedBlobInstallsNothingAndARetrySucceeds(fault: String) async throws {
    let fixture = try await makeSUT()
    defer { fixture.remove() }
    let catalog = try await fixture.load()
    let big = try #require(catalog.catalog.tags["B"]?.files.first { $0.path == "big.bin" })
    let blob = fixture.published.appending(path: "blobs/\(big.sha256)")
    let original = try Data(contentsOf: blob)
    var damaged = original
    switch fault {
    case "flip": damaged[1_234_567] ^= 0x01
    case "truncate": damaged = damaged.prefix(1_000_000)
    default: damaged.append(0)
    }
    try damaged.write(to: blob)
    do {
      try await ResourceRequest(tags: ["B"], catalog: catalog).beginAccessing()
      Issue.record("installed a tampered blob")
    } catch let error as ResourceError {
      #expect(error.code == .integrity)
      #expect(error.message.contains("big.bin"))
    }
    #expect(!fixture.files(in: "blobs").contains(big.sha256))
    #expect(fixture.files(in: "partial").isEmpty)
    try original.write(to: blob)
    try await ResourceRequest(tags: ["B"], catalog: catalog).beginAccessing()
    #expect(fixture.files(in: "blobs").contains(big.sha256))
  }

  @Test func aDamagedInstalledFileIsNoticedOnRead() async throws {
    let fixture = try await makeSUT()
    defer { fixture.remove() }
    let request = try ResourceRequest(tags: ["A"], catalog: try await fixture.load())
    try await request.beginAccessing()
    let url = try request.url(forResource: "a.txt")
    try Data("alph".utf8).write(to: url)
    #expect(throws: ResourceError.self) { try request.url(forResource: "a.txt") }
  }

  @Test func olderCatalogsAreRefused() async throws {
    let fixture = try await makeSUT()
    defer { fixture.remove() }
    try await fixture.publish(version: 3)
    _ = try await fixture.load()
    // A host serving an older catalog (odr pack itself refuses to write one over a newer).
    try FileManager.default.removeItem(at: fixture.published)
    try await fixture.publish(version: 2)
    do {
      _ = try await fixture.load()
      Issue.record("accepted a rollback")
    } catch let error as ResourceError {
      #expect(error.code == .integrity)
      #expect(error.message.contains("rollback"))
    }
    try await fixture.publish(version: 4)
    #expect(try await fixture.load().catalog.version == 4)
  }

  @Test func unsafeCatalogsAreRefusedBeforeAnythingIsWritten() async throws {
    let fixture = try await makeSUT()
    defer { fixture.remove() }
    var catalog = try Catalog.decode(Data(contentsOf: fixture.published.appending(path: "catalog.json")))
    catalog.tags["A"]?.files[0].path = "../../escape.txt"
    try catalog.encoded().write(to: fixture.published.appending(path: "catalog.json"))
    await #expect(throws: ResourceError.self) { try await fixture.load() }
    #expect(!FileManager.default.fileExists(atPath: fixture.cache.path))
  }

  @Test func cancellationInstallsNothing() async throws {
    let fixture = try await makeSUT()
    defer { fixture.remove() }
    let transport = SlowTransport()
    let catalog = try await fixture.load(transport: transport)
    let task = Task { try await ResourceRequest(tags: ["B"], catalog: catalog).beginAccessing() }
    for await _ in transport.streaming { break }  // mid-download: the first chunk is in
    task.cancel()
    await #expect(throws: CancellationError.self) { try await task.value }
    #expect(fixture.files(in: "blobs").isEmpty)
    #expect(fixture.files(in: "partial").isEmpty)
  }
}

/// Counts how many blobs were streamed.
final class CountingTransport: BlobTransport {
  private let count = Atomic(0)
  var streams: Int { count.load(ordering: .relaxed) }
  func data(at url: URL, limit: Int) async throws -> Data { try await FileTransport().data(at: url, limit: limit) }
  func stream(_ url: URL, into sink: (UnsafeRawBufferPointer) throws -> Void) async throws {
    count.add(1, ordering: .relaxed)
    try await Task.sleep(for: .milliseconds(20))  // widen the window for races
    try await FileTransport().stream(url, into: sink)
  }
}

/// Delivers 64 KiB every 10 ms until cancelled; `streaming` yields after
/// each chunk delivered.
final class SlowTransport: BlobTransport {
  let (streaming, delivered) = AsyncStream<Void>.makeStream()
  func data(at url: URL, limit: Int) async throws -> Data { try await FileTransport().data(at: url, limit: limit) }
  func stream(_ url: URL, into sink: (UnsafeRawBufferPointer) throws -> Void) async throws {
    let bytes = try Data(contentsOf: url)
    for start in stride(from: 0, to: bytes.count, by: 65_536) {
      try await Task.sleep(for: .milliseconds(10))
      try bytes[start..<min(start + 65_536, bytes.count)].withUnsafeBytes { try sink($0) }
      delivered.yield()
    }
  }
}
