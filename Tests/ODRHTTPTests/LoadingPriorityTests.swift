import Foundation
import ODRHTTP
@testable import ODRPublishing
@testable import ODRResources
import ODRTesting
@testable import ODRTrust
import Testing
@testable import ODRCatalog

/// Loading priority: with the one download slot taken, waiting requests are
/// served urgent first, then by priority, and a priority changed while
/// waiting counts. Order counted server-side. The test holds the slot
/// itself and queues each request once the one before is waiting: no
/// sleep decides the order.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct LoadingPriorityTests {
  @Test func urgentFirstThenByPriorityEvenWhenChangedWhileWaiting() async throws {
    let root = FileManager.default.temporaryDirectory.appending(path: "odr-priority-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    let source = root.appending(path: "src")
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    let names = ["Low", "Mid", "High", "Raised"]
    for (index, name) in names.enumerated() {
      try Data(repeating: UInt8(index + 1), count: 32 << 10).write(to: source.appending(path: "\(name).bin"))
    }
    let tags = names.map { #""\#($0)": {"category": "onDemand", "files": ["\#($0).bin"]}"# }.joined(separator: ", ")
    try Data(#"{"bundle": "com.example.priority", "tags": {\#(tags)}}"#.utf8).write(to: source.appending(path: "tags.json"))
    let catalog = try await Publisher(source: source).pack(to: root.appending(path: "pub"))
    let blob = { (name: String) in catalog.tags[name]!.files[0].sha256 }
    try await TestHTTPServer.serving(files: root.appending(path: "pub")) { server in
      var resources = try await ResourceCatalog.load(from: server.baseURL.appending(path: "catalog.json"),
                                                     cacheHome: root.appending(path: "cache"), transport: HTTPTransport(),
                                                     trust: TrustPolicy(stateHome: root.appending(path: "state")))
      let scheduler = DownloadScheduler(width: 1)
      resources.scheduler = scheduler
      func request(_ name: String, _ priority: Double) throws -> ResourceRequest {
        let request = try ResourceRequest(tags: [name], catalog: resources)
        request.loadingPriority = priority
        return request
      }
      try await scheduler.acquire(id: UUID(), priority: ResourceRequest.urgent)  // the slot is taken
      let low = try request("Low", 0.1), mid = try request("Mid", 0.5), high = try request("High", ResourceRequest.urgent),
          raised = try request("Raised", 0.2)
      var waiting: [Task<Void, any Error>] = []
      for queued in [low, mid, high, raised] {
        waiting.append(Task { try await queued.beginAccessing() })
        while await scheduler.waitingCount < waiting.count { try await Task.sleep(for: .milliseconds(1)) }
      }
      raised.loadingPriority = 0.9  // changed while waiting (the scheduler hears of it asynchronously)
      while await scheduler.waitingPriorities.last != 0.9 { try await Task.sleep(for: .milliseconds(1)) }
      #expect(server.requestOrder.filter { $0.contains("/blobs/") }.isEmpty)
      await scheduler.release()
      for task in waiting { try await task.value }
      let order = server.requestOrder.filter { $0.contains("/blobs/") }.map { path in names.first { path.hasSuffix(blob($0)) }! }
      #expect(order == ["High", "Raised", "Mid", "Low"])
    }
  }
}
