import FoundationEssentials
import ODRBase
import ODRExec
import ODRCatalog
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `odr exec --watch INTERVAL -- CMD`: odr stays the parent, revalidates
/// the keys' source every interval, and when the keys the command started
/// with change, stops it (SIGTERM, then SIGKILL after the stop timeout) and
/// starts it again with the new ones, at most once per interval. When the
/// command ends on its own, odr exits as it did. A revalidation that fails
/// keeps the command running and is said once (and once when it works
/// again); an expired catalog is such a failure: said, not acted on.
struct WatchRun {
  let commandLine: [String]
  let source: KeySourceOptions
  let interval: Duration
  let stopTimeout: Duration
  let pristine: Bool

  /// What the command runs with: the keys' variables and the tag's entry
  /// they came from (nil: the keyring's keys).
  private struct Keys: Sendable {
    var entry: Catalog.Tag?
    var variables: [SecretVariables.Variable]
  }

  func run(_ context: CommandContext) async throws -> Never {
    // A warning that holds across rounds (a mirror down) is said once, and
    // once more when it is over.
    let repeats = Output.Repeats()
    let (entry, keys) = try await source.revalidated(since: nil, context.sayingOnce(repeats))
    _ = repeats.endRound()
    var current = Keys(entry: entry, variables: try await source.variables(context, keys: keys ?? []).variables)
    while true {
      let environment = CommandRunner.environment(with: current.variables.map { ($0.name, $0.value) }, pristine: pristine, base: context.environment)
      let (commandLine, searchPath, secrets) = (commandLine, context.environment["PATH"], current.variables.map(\.value))
      let command = Task {
        await BlockingThread.run {
          Result { try CommandRunner.runMasked(commandLine, environment: environment, searchPath: searchPath, masking: secrets) }
        }
      }
      let next = Mutex<Keys?>(nil)
      let watcher = Task { [current] in
        guard let changed = try await watch(from: current, repeats, context) else { return }
        next.withLock { $0 = changed }
        CommandRunner.signalRunningCommand(SIGTERM)
        try await Task.sleep(for: stopTimeout)
        CommandRunner.signalRunningCommand(SIGKILL)
      }
      let status = try await command.value.get()
      watcher.cancel()
      guard let changed = next.withLock({ $0 }) else { CommandRunner.exit(likeStatus: status) }
      current = changed
    }
  }

  /// Revalidates every interval until the keys differ from `current`
  /// (says which, by name) and returns the new ones.
  private func watch(from current: Keys, _ repeats: Output.Repeats, _ context: CommandContext) async throws -> Keys? {
    var entry = current.entry
    var failing = false
    let quiet = context.sayingOnce(repeats)
    while true {
      try await Task.sleep(for: interval)
      do {
        let (newEntry, newKeys) = try await source.revalidated(since: entry, quiet)
        if failing { context.output.error("revalidated again; watching for new keys every \(Self.describe(interval))") }
        for line in repeats.endRound() { context.output.error("no longer the case: \(line.hasPrefix("warning: ") ? String(line.dropFirst(9)) : line)") }
        failing = false
        entry = newEntry
        guard let newKeys else { continue }
        let next = try SecretVariables(keys: newKeys, only: source.onlyNames).variables
        let old = Dictionary(current.variables.map { ($0.key, $0) }) { first, _ in first }
        let new = Dictionary(next.map { ($0.key, $0) }) { first, _ in first }
        let changed = Set(old.keys).union(new.keys).filter { old[$0] != new[$0] }
        guard !changed.isEmpty else { continue }
        context.output.error("the keys changed (\(changed.sorted().joined(separator: ", "))): restarting the command")
        return Keys(entry: newEntry, variables: next)
      } catch {
        if Task.isCancelled { return nil }  // the command ended meanwhile
        if !failing { context.output.error("could not revalidate the keys (\(error)); the command keeps running with the keys it has") }
        failing = true
      }
    }
  }

  static func describe(_ interval: Duration) -> String {
    let ms = interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000
    return ms % 1000 == 0 ? "\(ms / 1000) s" : "\(ms) ms"
  }
}
