import ODRBase
import FoundationEssentials
import ODRCatalog

/// When each tag was last used and the preservation priorities set at run
/// time (`setPreservationPriority(_:forTags:)`, `odr priority`), kept in
/// `usage.json` and changed only under `locks/usage`: what purging orders by.
/// A file that is there but cannot be read is an error, never "no usage".
public struct TagUsage: Sendable {
  struct File: Codable {
    var lastUse: [String: Double] = [:]
    var priority: [String: Double] = [:]
  }

  let state: StateFile<File>
  /// The clock uses are recorded by (the store's).
  let now: @Sendable () -> Date

  init(file: URL, lock: URL, now: @escaping @Sendable () -> Date) {
    state = StateFile(url: file, what: "the last uses and priorities of this store's tags",
                      reset: "remove it (last-use times and priorities set with `odr priority` are lost)", lock: lock,
                      durable: false)  // purge order: a power loss may lose the last change
    self.now = now
  }

  /// When `tag` was last begun (seconds since 1970), if ever.
  public func lastUse(of tag: String) throws -> Double? { try read().lastUse[tag] }

  /// Every tag's last use.
  public func lastUses() throws -> [String: Double] { try read().lastUse }

  /// The priority set for `tag` at run time, if any (it overrides the catalog's).
  public func priority(of tag: String) throws -> Double? { try read().priority[tag] }

  /// Records that `tags` were used now.
  public func touch(_ tags: [String]) async throws {
    let now = now().timeIntervalSince1970
    try await change { for tag in tags { $0.lastUse[tag] = now } }
  }

  /// Sets the preservation priority of `tags` (0…1; lower is purged first).
  public func setPriority(_ priority: Double, for tags: [String]) async throws {
    guard (0...1).contains(priority) else {
      throw ResourceError(.invalidSource, "A preservation priority is between 0 and 1 (lower is purged first), not \(priority).")
    }
    try await change { for tag in tags { $0.priority[tag] = priority } }
  }

  private func change(_ body: @escaping (inout File) -> Void) async throws {
    try await state.update { contents in
      var changed = contents ?? File()
      body(&changed)
      contents = changed
    }
  }

  private func read() throws -> File {
    try state.read() ?? File()
  }
}
