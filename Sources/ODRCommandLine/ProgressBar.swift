import ODRResources
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One progress line on stderr while a command downloads: bytes, rate and
/// time left, redrawn at most ten times a second. Silent unless stderr is a
/// terminal (and not `--quiet`), so pipes and logs never see it.
final class ProgressBar: Sendable {
  private struct State { var lastDraw: ContinuousClock.Instant?; var drawn = false }
  private let start = ContinuousClock.now
  private let state = Mutex(State())
  let enabled: Bool

  init(quiet: Bool) {
    enabled = !quiet && isatty(STDERR_FILENO) == 1
  }

  /// The callback to hand to `beginAccessing(progress:)`, or nil when silent.
  var callback: ResourceRequest.Progress? {
    guard enabled else { return nil }
    return { [self] done, total in update(done, total) }
  }

  private func update(_ done: Int64, _ total: Int64) {
    let now = ContinuousClock.now
    let draw = state.withLock { state -> Bool in
      if let last = state.lastDraw, now - last < .milliseconds(100), done < total { return false }
      state.lastDraw = now
      state.drawn = true
      return true
    }
    guard draw else { return }
    let seconds = max(Double((now - start).components.attoseconds) / 1e18 + Double((now - start).components.seconds), 0.001)
    let rate = Double(done) / seconds
    let fraction = total > 0 ? Double(done) / Double(total) : 1
    let filled = Int(fraction * 24)
    let eta = rate > 0 ? Int((Double(total - done) / rate).rounded(.up)) : 0
    let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: 24 - filled)
    Output.prompt("\r\u{1b}[2K[\(bar)] \(megabytes(done)) / \(megabytes(total)) MB  \(megabytes(Int64(rate))) MB/s  ETA \(eta) s")
  }

  /// Clears the line, if one was drawn.
  func finish() {
    if state.withLock({ $0.drawn }) { Output.prompt("\r\u{1b}[2K") }
  }

  private func megabytes(_ bytes: Int64) -> String {
    let tenths = (bytes * 10 + 524_288) / 1_048_576
    return "\(tenths / 10).\(tenths % 10)"
  }
}
