import ODRResources
import Synchronization

/// The progress of a command's downloads on stderr, for people. On a
/// terminal, one line redrawn in place at most ten times a second: the tags,
/// a bar, MiB done of MiB, and once a rate is known, the rate and the time
/// left. With `TERM=dumb` (or no TERM), plain lines instead, at most one a
/// second, with no escape sequence. Nothing when stderr is not a terminal
/// or with `--quiet`. Resuming (and a source that refuses to resume) is said
/// in a line of its own, unless quiet, wherever stderr goes.
final class ProgressBar: Sendable {
  enum Style { case silent, redrawn, plain }

  private struct State {
    var lastDraw: ContinuousClock.Instant?
    var drawn = false
    var latest: ResourceRequest.LoadProgress?
    /// When the first progress came: the rate counts from there, not from
    /// the catalog's loading.
    var start: ContinuousClock.Instant?
  }
  private let state = Mutex(State())
  private let label: String
  private let quiet: Bool
  private let output: Output
  let style: Style

  /// A bar for downloading `tags` on `context`'s stderr.
  init(tags: [String], quiet: Bool, _ context: CommandContext) {
    label = tags.joined(separator: " ")
    self.quiet = quiet
    output = context.output
    let term = context.environment["TERM"] ?? ""
    style = quiet || !output.stderrIsTerminal ? .silent : term.isEmpty || term == "dumb" ? .plain : .redrawn
  }

  /// The observer to hand to `beginAccessing(observing:)`, or nil when quiet.
  var observer: ResourceRequest.LoadObserver? {
    guard !quiet else { return nil }
    return { [self] progress in update(progress) }
  }

  /// The last progress heard of (for the interruption message).
  var latest: ResourceRequest.LoadProgress? { state.withLock { $0.latest } }

  private func update(_ progress: ResourceRequest.LoadProgress) {
    let now = ContinuousClock.now
    let interval: Duration = style == .plain ? .seconds(1) : .milliseconds(100)
    let (draw, start) = state.withLock { state -> (Bool, ContinuousClock.Instant) in
      let start = state.start ?? now
      state.start = start
      state.latest = progress
      guard style != .silent, progress.event == nil, progress.bytesCompleted > 0 else { return (false, start) }
      if let last = state.lastDraw, now - last < interval, progress.bytesCompleted < progress.bytesTotal { return (false, start) }
      state.lastDraw = now
      state.drawn = style == .redrawn
      return (true, start)
    }
    if let event = progress.event { say(event) }
    guard draw else { return }
    let line = text(progress, elapsed: now - start)
    output.prompt(style == .plain ? line + "\n" : "\r\u{1b}[2K" + line)
  }

  /// "Movie [######..........] 24.9 / 256.0 MiB  12.3 MiB/s, 19 s left"
  private func text(_ progress: ResourceRequest.LoadProgress, elapsed: Duration) -> String {
    let (done, total) = (progress.bytesCompleted, progress.bytesTotal)
    let fraction = total > 0 ? Double(done) / Double(total) : 1
    let filled = min(24, Int(fraction * 24))
    let bar = style == .plain ? "\(Int(fraction * 100))%" : "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: 24 - filled) + "]"
    var line = "\(label) \(bar) \(Self.mebibytes(done)) / \(Self.mebibytes(total)) MiB"
    // A rate counts the bytes downloaded now, never those resumed from disk,
    // and is shown once there is enough to measure.
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let downloaded = done - progress.bytesResumed
    if seconds >= 0.5, downloaded > 0 {
      let rate = Double(downloaded) / seconds
      let left = Int((Double(total - done) / rate).rounded(.up))
      line += "  \(Self.mebibytes(Int64(rate))) MiB/s" + (done < total ? ", \(left) s left" : "")
    }
    return line
  }

  private func say(_ event: ResourceRequest.LoadProgress.Event) {
    clearLine()
    switch event {
    case .resumed(let path, let offset, let size):
      output.error("resuming \(path) at \(Self.mebibytes(offset)) of \(Self.mebibytes(size)) MiB (kept from an interrupted download)")
    case .restarted(let path, let discarded):
      output.error("the server does not resume \(path) (it ignores ranges, or the file changed): starting over; \(Self.mebibytes(discarded)) MiB kept from before discarded")
    }
  }

  /// Clears the redrawn line, if one was drawn.
  func finish() { clearLine() }

  private func clearLine() {
    let drawn = state.withLock { state in
      defer { state.drawn = false }
      return state.drawn
    }
    if drawn { output.prompt("\r\u{1b}[2K") }
  }

  /// Bytes in MiB with one decimal.
  static func mebibytes(_ bytes: Int64) -> String {
    let tenths = (bytes * 10 + 524_288) / 1_048_576
    return "\(tenths / 10).\(tenths % 10)"
  }
}
