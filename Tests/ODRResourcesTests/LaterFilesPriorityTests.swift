import Foundation
@testable import ODRPublishing
@testable import ODRResources
import ODRTesting
@testable import ODRTransports
@testable import ODRTrust
import Synchronization
import Testing
@testable import ODRCatalog

/// Seed 004's race in the scheduler: a loading priority changed while a
/// request is downloading counts for the files it has not queued yet.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(3))) struct LaterFilesPriorityTests {
  /// Reads files, but each download waits until the test opens its gate;
  /// records the order downloads start in.
  final class GatedTransport: BlobTransport {
    private let state = Mutex<(started: [String], open: Set<String>, waiters: [String: CheckedContinuation<Void, Never>])>(([], [], [:]))

    var started: [String] { state.withLock { $0.started } }

    func open(_ name: String) {
      let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
        state.open.insert(name)
        return state.waiters.removeValue(forKey: name)
      }
      waiter?.resume()
    }

    func data(at url: URL, limit: Int) async throws -> Data { try await FileTransport().data(at: url, limit: limit) }

    func stream(_ url: URL, into sink: (UnsafeRawBufferPointer) throws -> Void) async throws {
      let name = url.lastPathComponent
      await withCheckedContinuation { continuation in
        let wait = state.withLock { state -> Bool in
          state.started.append(name)
          guard !state.open.contains(name) else { return false }
          state.waiters[name] = continuation
          return true
        }
        if !wait { continuation.resume() }
      }
      try await FileTransport().stream(url, into: sink)
    }
  }

  @Test func aPriorityRaisedMidRequestCountsForItsLaterFiles() async throws {
    let root = FileManager.default.temporaryDirectory.appending(path: "odr-later-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    let source = root.appending(path: "src")
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    for (index, name) in ["r1", "r2", "p", "q"].enumerated() {
      try Data(repeating: UInt8(index + 1), count: 1024 + index).write(to: source.appending(path: "\(name).bin"))
    }
    try Data(#"{"bundle": "com.example.later", "tags": {"R": {"category": "onDemand", "files": ["r1.bin", "r2.bin"]}, "P": {"category": "onDemand", "files": ["p.bin"]}, "Q": {"category": "onDemand", "files": ["q.bin"]}}}"#.utf8)
      .write(to: source.appending(path: "tags.json"))
    let catalog = try await Publisher(source: source).pack(to: root.appending(path: "pub"))
    let blob = { (file: String) in catalog.tags.values.flatMap(\.files).first { $0.path == file }!.sha256 }
    let name = { (sha: String) in ["r1", "r2", "p", "q"].first { blob("\($0).bin") == sha }! }
    let transport = GatedTransport()
    var resources = try await ResourceCatalog.load(from: root.appending(path: "pub"), cacheHome: root.appending(path: "cache"), transport: transport,
                                                   trust: TrustPolicy(stateHome: root.appending(path: "state")))
    resources.scheduler = DownloadScheduler(width: 1)
    let scheduler = resources.scheduler
    func request(_ tag: String, _ priority: Double) throws -> ResourceRequest {
      let request = try ResourceRequest(tags: [tag], catalog: resources)
      request.loadingPriority = priority
      return request
    }
    func waitUntil(_ condition: () async -> Bool) async { while !(await condition()) { await Task.yield() } }

    // R (two files, low priority) takes the only slot with its first file;
    // P (0.6) and Q (0.5) queue behind it.
    let r = try request("R", 0.1), p = try request("P", 0.6), q = try request("Q", 0.5)
    let rTask = Task { try await r.beginAccessing() }
    await waitUntil { transport.started.count == 1 }
    let pTask = Task { try await p.beginAccessing() }
    let qTask = Task { try await q.beginAccessing() }
    await waitUntil { await scheduler.waitingCount == 2 }
    r.loadingPriority = 0.9  // raised mid-request
    transport.open(transport.started[0])  // R's first file ends; P (0.6) gets the slot; R's second file queues
    await waitUntil { transport.started.count == 2 }
    await waitUntil { await scheduler.waitingCount == 2 }
    transport.open(transport.started[1])  // P ends: R's second file (0.9) goes before Q (0.5)
    await waitUntil { transport.started.count == 3 }
    for sha in transport.started { transport.open(sha) }
    await waitUntil { transport.started.count == 4 }
    for sha in transport.started { transport.open(sha) }
    try await rTask.value
    try await pTask.value
    try await qTask.value
    let order = transport.started.map(name)
    #expect(order.count == 4 && order[1] == "p" && order[3] == "q" && Set([order[0], order[2]]) == ["r1", "r2"], "\(order)")
  }
}
