import ODRBase
import FoundationEssentials
import ODRCatalog
#if canImport(Glibc)
import Glibc
#endif

/// The pins of one store as leases (docs/design.md, "Local store"): each pin names the process
/// that holds it — its pid and its start time, so a recycled pid is not
/// mistaken for the holder. A lease whose process is gone is reclaimed the
/// next time the ledger is read, so a crashed holder cannot pin a tag
/// forever. Kept in `pins.json`, changed only under `locks/pins`.
public struct PinLedger: Sendable {
  /// One pin.
  public struct Lease: Codable, Equatable, Sendable {
    public let tag: String
    /// The holder's pid.
    public let pid: Int32
    /// The holder's start time (clock ticks after boot, /proc/PID/stat field 22).
    public let start: UInt64
    /// When the pin was taken (seconds since 1970).
    public let since: Double

    /// True while the holder runs.
    public var isLive: Bool { ProcessIdentity(pid: pid, start: start).isLive }

    /// The holder's command name, while it runs.
    public var holder: String? {
      // the command name is for display only
      (dropping(.messageOnly) { try String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8) })?.trimmingSuffix("\n")
    }
  }

  struct File: Codable { var leases: [Lease] }

  let state: StateFile<File>
  var lock: URL { state.lock }

  /// The clock leases are dated by (the store's).
  let now: @Sendable () -> Date

  init(file: URL, lock: URL, now: @escaping @Sendable () -> Date) {
    state = StateFile(url: file, what: "the pins of this store",
                      reset: "remove it (the pins in it are dropped: begin the tags again)", lock: lock,
                      durable: false)  // after a power loss every holder is gone
    self.now = now
  }

  /// The live leases, oldest first. Throws when `pins.json` is there but
  /// cannot be read: never taken for "no pins" (a purge would remove
  /// pinned files).
  public func leases() throws -> [Lease] {
    try read().filter(\.isLive)
  }

  /// Adds one lease per tag held by `owner`. Throws when `owner` is not a
  /// running process.
  public func pin(_ tags: [String], owner: Int32) async throws {
    guard let start = Self.startTime(of: owner) else {
      throw ResourceError(.notFound, "No running process \(owner) to hold the pins.")
    }
    let now = now().timeIntervalSince1970
    try await change { leases in leases += tags.map { Lease(tag: $0, pid: owner, start: start, since: now) } }
  }

  /// Removes one lease per tag: one held by `owner` if there is one, else the
  /// oldest. Returns the tags that had no pin.
  @discardableResult
  public func unpin(_ tags: [String], owner: Int32) async throws -> [String] {
    try await change { leases in
      var unpinned: [String] = []
      for tag in tags {
        let index = leases.firstIndex { $0.tag == tag && $0.pid == owner } ?? leases.firstIndex { $0.tag == tag }
        if let index { leases.remove(at: index) } else { unpinned.append(tag) }
      }
      return unpinned
    }
  }

  /// ``pin(_:owner:)`` for synchronous callers (blocks on the lock).
  public func pinNow(_ tags: [String], owner: Int32) throws {
    guard let start = Self.startTime(of: owner) else {
      throw ResourceError(.notFound, "No running process \(owner) to hold the pins.")
    }
    try FileLock(url: lock).withExclusiveNow {
      let now = now().timeIntervalSince1970
      try rewrite { leases in leases += tags.map { Lease(tag: $0, pid: owner, start: start, since: now) } }
    }
  }

  /// ``unpin(_:owner:)`` for synchronous callers such as `deinit` (blocks on
  /// the lock), removing only leases `owner` holds.
  public func unpinNow(_ tags: [String], owner: Int32) throws {
    try FileLock(url: lock).withExclusiveNow {
      try rewrite { leases in
        for tag in tags {
          if let index = leases.firstIndex(where: { $0.tag == tag && $0.pid == owner }) { leases.remove(at: index) }
        }
      }
    }
  }

  /// Reads, drops dead leases, applies `body`, writes atomically — one
  /// critical section shared by all processes — on a thread of its own,
  /// lock wait included: a holder of the pins lock never waits for the
  /// cooperative pool, whose threads `pinNow`/`unpinNow` (synchronous API:
  /// `conditionallyBeginAccessing`, `endAccessing`, `deinit`) may all be
  /// blocked on it.
  private func change<T: Sendable>(_ body: @escaping @Sendable (inout [Lease]) -> T) async throws -> T {
    let ledger = self
    return try await BlockingThread.run { Result { try FileLock(url: ledger.lock).withExclusiveNow { try ledger.rewrite(body) } } }.get()
  }

  /// The body of a critical section: the caller holds the lock.
  @discardableResult
  func rewrite<T>(_ body: (inout [Lease]) -> T) throws -> T {
    var leases = try read().filter(\.isLive)
    let result = body(&leases)
    try state.write(File(leases: leases))
    return result
  }

  private func read() throws -> [Lease] {
    try state.read()?.leases ?? []
  }

  /// The start time of process `pid`, or nil when there is no such process.
  static func startTime(of pid: Int32) -> UInt64? { ProcessIdentity.startTime(of: pid) }
}

extension String {
  fileprivate func trimmingSuffix(_ suffix: String) -> String { hasSuffix(suffix) ? String(dropLast(suffix.count)) : self }
}
