import FoundationEssentials

/// When each tag was last used and the preservation priorities set at run
/// time (`setPreservationPriority(_:forTags:)`, `odr priority`), kept in
/// `usage.json` and changed only under `locks/usage`: what purging orders by.
public struct TagUsage: Sendable {
  private struct File: Codable {
    var lastUse: [String: Double] = [:]
    var priority: [String: Double] = [:]
  }

  let file: URL
  let lock: URL

  /// When `tag` was last begun (seconds since 1970), if ever.
  public func lastUse(of tag: String) -> Double? { read().lastUse[tag] }

  /// Every tag's last use.
  public func lastUses() -> [String: Double] { read().lastUse }

  /// The priority set for `tag` at run time, if any (it overrides the catalog's).
  public func priority(of tag: String) -> Double? { read().priority[tag] }

  /// Records that `tags` were used now.
  public func touch(_ tags: [String]) async throws {
    let now = Date().timeIntervalSince1970
    try await change { for tag in tags { $0.lastUse[tag] = now } }
  }

  /// Sets the preservation priority of `tags` (0…1; lower is purged first).
  public func setPriority(_ priority: Double, for tags: [String]) async throws {
    guard (0...1).contains(priority) else {
      throw ResourceError(.invalidSource, "A preservation priority is between 0 and 1 (lower is purged first), not \(priority).")
    }
    try await change { for tag in tags { $0.priority[tag] = priority } }
  }

  private func change(_ body: (inout File) -> Void) async throws {
    try await FileIO.withLock(lock) {
      var contents = read()
      body(&contents)
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
      try FileIO.atomicWrite(try encoder.encode(contents), to: file, mode: 0o600)
    }
  }

  private func read() -> File {
    guard let data = try? Data(contentsOf: file) else { return File() }
    return (try? JSONDecoder().decode(File.self, from: data)) ?? File()
  }
}
