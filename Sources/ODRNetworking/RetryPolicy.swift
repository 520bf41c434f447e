/// When and how ``APIClient`` retries an idempotent request: on connection
/// failures, 502/503/504, and 429 or 503 with a `Retry-After` it can wait
/// for; with exponential backoff and full jitter, a bounded number of times.
public struct RetryPolicy: Sendable {
  /// Attempts in all, the first included (1: never retry).
  public var maxAttempts: Int
  /// The backoff before the second attempt; it doubles each time.
  public var baseDelay: Duration
  /// The longest the client waits before one attempt, backoff or
  /// `Retry-After`. A `Retry-After` longer than this is not waited for: the
  /// response is returned as an error instead.
  public var maxDelay: Duration

  public init(maxAttempts: Int = 3, baseDelay: Duration = .milliseconds(200), maxDelay: Duration = .seconds(10)) {
    self.maxAttempts = max(1, maxAttempts)
    self.baseDelay = baseDelay
    self.maxDelay = maxDelay
  }

  /// Three attempts, 200 ms base, 10 s at most.
  public static let `default` = RetryPolicy()
  /// One attempt.
  public static let never = RetryPolicy(maxAttempts: 1)

  /// The wait before attempt `attempt + 1`: a random time up to
  /// `baseDelay × 2^(attempt-1)`, capped at `maxDelay`.
  func backoff(after attempt: Int) -> Duration {
    let ceiling = min(maxDelay, baseDelay * (1 << min(attempt - 1, 20)))
    let nanoseconds = ceiling.components.seconds * 1_000_000_000 + ceiling.components.attoseconds / 1_000_000_000
    return .nanoseconds(Int64.random(in: 0...max(0, nanoseconds)))
  }
}
