import FoundationEssentials

/// Where the downloads of a process wait for one of `width` slots. The
/// waiter with the highest loading priority goes next (``ResourceRequest/urgent``
/// before everything), then the one that came first; a waiter's priority can
/// change while it waits.
public actor DownloadScheduler {
  /// The scheduler requests use unless their catalog names another: 4 slots.
  public static let shared = DownloadScheduler(width: 4)

  private struct Waiter {
    let id: UUID
    var priority: Double
    let arrival: Int
    let continuation: CheckedContinuation<Void, any Error>
  }

  private let width: Int
  private var busy = 0
  private var arrivals = 0
  private var waiting: [Waiter] = []

  /// A scheduler running at most `width` downloads at a time.
  public init(width: Int) { self.width = max(1, width) }

  /// Runs `body` holding a slot, waited for first; the slot is given back
  /// however `body` ends. `id` names the waiter for ``reprioritize(_:to:)``.
  nonisolated func withSlot<T>(id: UUID, priority: Double, _ body: () async throws -> T) async throws -> T {
    try await acquire(id: id, priority: priority)
    do {
      let value = try await body()
      await release()
      return value
    } catch {
      await release()
      throw error
    }
  }

  /// Waits for a slot; `id` names the waiter for ``reprioritize(_:to:)``.
  func acquire(id: UUID, priority: Double) async throws {
    if busy < width && waiting.isEmpty {
      busy += 1
      return
    }
    arrivals += 1
    let arrival = arrivals
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        waiting.append(Waiter(id: id, priority: priority, arrival: arrival, continuation: continuation))
      }
    } onCancel: {
      Task { await self.cancel(arrival: arrival) }
    }
  }

  /// Gives a slot back; the highest-priority waiter takes it.
  func release() {
    guard let next = waiting.indices.max(by: { (waiting[$0].priority, -waiting[$0].arrival) < (waiting[$1].priority, -waiting[$1].arrival) }) else {
      busy -= 1
      return
    }
    waiting.remove(at: next).continuation.resume()
  }

  /// How many downloads wait for a slot.
  var waitingCount: Int { waiting.count }

  /// The priorities of the downloads waiting, in arrival order.
  var waitingPriorities: [Double] { waiting.map(\.priority) }

  /// Changes the priority of `id`'s waiting downloads.
  func reprioritize(_ id: UUID, to priority: Double) {
    for index in waiting.indices where waiting[index].id == id { waiting[index].priority = priority }
  }

  private func cancel(arrival: Int) {
    guard let index = waiting.firstIndex(where: { $0.arrival == arrival }) else { return }
    waiting.remove(at: index).continuation.resume(throwing: CancellationError())
  }
}
