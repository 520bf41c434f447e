import ODRBase
import Foundation
import ODRCatalog
import ODRHTTP
import ODRPublishing
import ODRResources
import ODRTesting
import ODRTrust
import Testing

/// Requests against a catalog served over HTTP by a test server on
/// 127.0.0.1 that injects faults and counts requests.
@Suite(.tags(.timed), .enabled(if: TestSelection.timed), .timeLimit(.minutes(2))) struct HTTPDownloadTests {
  struct Fixture {
    let root: URL
    let server: TestHTTPServer
    let big: Catalog.File

    /// Publishes a catalog with a 24 MB file, runs `test` with it served,
    /// then removes it.
    static func run(_ test: (Fixture) async throws -> Void) async throws {
      let root = FileManager.default.temporaryDirectory.appending(path: "odr-http-\(UUID().uuidString)")
      defer { try? FileManager.default.removeItem(at: root) }
      // Mostly one byte, so that a debug build makes it fast.
      let source = root.appending(path: "src")
      try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
      try Data("""
        { "bundle": "com.example.http", "tags": {
          "Small": { "category": "initial", "files": ["a.txt"] },
          "Big": { "category": "onDemand", "files": ["big.bin", "a.txt"] } } }
        """.utf8).write(to: source.appending(path: "tags.json"))
      try Data("alpha".utf8).write(to: source.appending(path: "a.txt"))
      try await BigFile.write(source.appending(path: "big.bin"), size: 6_000_000, fill: 0xa5)
      let catalog = try await Publisher(source: source).pack(to: root.appending(path: "pub"))
      let big = catalog.tags["Big"]!.files.first { $0.path == "big.bin" }!
      try await TestHTTPServer.serving(files: root.appending(path: "pub")) { server in
        try await test(Fixture(root: root, server: server, big: big))
      }
    }

    func load() async throws -> ResourceCatalog {
      try await ResourceCatalog.load(from: server.baseURL.appending(path: "catalog.json"), cacheHome: root.appending(path: "cache"),
                                     transport: HTTPTransport(), trust: TrustPolicy(stateHome: root.appending(path: "state")))
    }

    func installed() -> [String] {
      (try? FileManager.default.contentsOfDirectory(atPath: root.appending(path: "cache/odr/com.example.http/blobs").path)) ?? []
    }

    func partials() -> [String] {
      (try? FileManager.default.contentsOfDirectory(atPath: root.appending(path: "cache/odr/com.example.http/partial").path)) ?? []
    }
  }

  @Test func downloadsVerifiesAndInstalls() async throws {
    try await Fixture.run { fixture in
      let request = try ResourceRequest(tags: ["Big"], catalog: try await fixture.load())
      try await request.beginAccessing()
      #expect(try Data(contentsOf: request.url(forResource: "big.bin")).count == 6_000_000)
      #expect(fixture.installed().count == 2)
      #expect(fixture.server.requests(forPathEndingWith: fixture.big.sha256) == 1)
    }
  }

  @Test(arguments: [
    (TestHTTPServer.Fault.status(404), ResourceError.Code.network),
    (.status(500), .network),
    (.dropAfter(2_000_000), .network),
    (.truncate(2_000_000), .integrity),
    (.flipByte(3_456_789), .integrity),
  ])
  func aFaultInstallsNothingAndARetrySucceeds(fault: TestHTTPServer.Fault, code: ResourceError.Code) async throws {
    try await Fixture.run { fixture in
      let catalog = try await fixture.load()
      fixture.server.setFault(fault, forPathEndingWith: fixture.big.sha256)
      do {
        try await ResourceRequest(tags: ["Big"], catalog: catalog).beginAccessing()
        Issue.record("installed despite \(fault)")
      } catch let error as ResourceError {
        #expect(error.code == code, "\(error.message)")
      }
      #expect(!fixture.installed().contains(fixture.big.sha256))
      #expect(fixture.partials().isEmpty)
      fixture.server.setFault(nil, forPathEndingWith: fixture.big.sha256)
      try await ResourceRequest(tags: ["Big"], catalog: catalog).beginAccessing()
      #expect(fixture.installed().contains(fixture.big.sha256))
    }
  }

  @Test func concurrentRequestsDownloadEachBlobOnce() async throws {
    try await Fixture.run { fixture in
      let catalog = try await fixture.load()
      try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<8 { group.addTask { try await ResourceRequest(tags: ["Big", "Small"], catalog: catalog).beginAccessing() } }
        try await group.waitForAll()
      }
      #expect(fixture.server.requests(forPathEndingWith: fixture.big.sha256) == 1)
      #expect(fixture.server.requests(forPathEndingWith: "/blobs/" + catalog.catalog.tags["Small"]!.files[0].sha256) == 1)
    }
  }

  @Test func cancellingASlowDownloadStopsPromptlyAndInstallsNothing() async throws {
    try await Fixture.run { fixture in
      let catalog = try await fixture.load()
      fixture.server.setFault(.slow(chunk: 64 * 1024, pause: .milliseconds(20)), forPathEndingWith: fixture.big.sha256)
      let task = Task { try await ResourceRequest(tags: ["Big"], catalog: catalog).beginAccessing() }
      // Cancel once the download is under way, not after a guessed delay.
      while fixture.server.requests(forPathEndingWith: fixture.big.sha256) == 0 { try await Task.sleep(for: .milliseconds(2)) }
      let clock = ContinuousClock()
      let start = clock.now
      task.cancel()
      await #expect(throws: CancellationError.self) { try await task.value }
      #expect(clock.now - start < .seconds(2))
      #expect(!fixture.installed().contains(fixture.big.sha256))
      #expect(fixture.partials().isEmpty)
    }
  }

  /// A 404 for catalog.json is a wrong URL, not an outage (issue 13): it
  /// is `.notFound` and says to check the URL (it was `.network` before).
  @Test func aMissingCatalogIsNotFoundAndSaysToCheckTheURL() async throws {
    try await Fixture.run { fixture in
      fixture.server.setFault(.status(404), forPathEndingWith: "catalog.json")
      do {
        _ = try await fixture.load()
        Issue.record("loaded a missing catalog")
      } catch let error as ResourceError {
        #expect(error.code == .notFound)
        #expect(error.message.contains("HTTP 404") && error.message.contains("Check the --catalog URL"))
      }
    }
  }
}
