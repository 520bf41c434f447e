import FoundationEssentials
import Synchronization

/// The one registry of observers (seed 002): every ``observe()`` gets an
/// ``ObservationStream`` of what is sent from then on, starting with the
/// latest value when there is one. Registration, the latest value and
/// sending share one lock, so an observer never misses or repeats a change
/// made while it registers.
package final class Broadcaster<Element: Sendable>: Sendable {
  private struct Registry {
    var latest: Element?
    var observers: [UUID: AsyncStream<Element>.Continuation] = [:]
  }

  private let registry: Mutex<Registry>

  /// `latest`: what a new observer gets first (nil: nothing until the
  /// next ``send(_:)``).
  package init(latest: Element? = nil) {
    registry = Mutex(Registry(latest: latest))
  }

  /// Every value sent from now on, after the latest one if any.
  package func observe() -> ObservationStream<Element> {
    ObservationStream { id, continuation in
      registry.withLock {
        $0.observers[id] = continuation
        if let latest = $0.latest { continuation.yield(latest) }
      }
    } onCancel: { [weak self] id in
      self?.registry.withLock { _ = $0.observers.removeValue(forKey: id) }
    }
  }

  /// Sends `value` to every observer; with `keep`, new observers start with it.
  package func send(_ value: Element, keep: Bool = false) {
    registry.withLock {
      if keep { $0.latest = value }
      for continuation in $0.observers.values { continuation.yield(value) }
    }
  }
}
