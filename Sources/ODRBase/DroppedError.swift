/// Why odr drops an error on purpose. `dropping(_:_:)` is the one
/// way its sources ignore a failure (`scripts/checks/sources` refuses a bare
/// `try?`), so the reason is in the code, and every place of a kind can be
/// found by searching for it.
public enum DroppedError: Sendable {
  /// The failure is the answer — not there, does not parse, not for this
  /// key — and the caller's nil path handles it, often with an error of
  /// its own.
  case isTheAnswer
  /// Only a message or a display depends on it; the outcome reported is
  /// another.
  case messageOnly
  /// Cleaning up after the work: a failure leaves something for a later
  /// clean-up, never a wrong result.
  case cleanup
  /// A record whose loss changes no result (purge order, a repair the next
  /// run redoes, a name shown when it can be found).
  case bestEffort
  /// It cannot fail (encoding plain values).
  case cannotFail
}

/// The value of `body`, or nil when it throws, for `reason`.
@inlinable @discardableResult
public func dropping<T>(_ reason: DroppedError, _ body: () throws -> T) -> T? {
  do { return try body() } catch { return nil }
}

/// The value of `body` (itself optional), or nil when it throws, for `reason`.
@inlinable @discardableResult
public func dropping<T>(_ reason: DroppedError, _ body: () throws -> T?) -> T? {
  do { return try body() } catch { return nil }
}

/// `dropping(_:_:)` for an async `body`, run in the caller's isolation.
@inlinable @discardableResult
public func droppingAsync<T>(_ reason: DroppedError, isolation: isolated (any Actor)? = #isolation,
                             _ body: () async throws -> T) async -> T? {
  do { return try await body() } catch { return nil }
}

/// `droppingAsync(_:isolation:_:)` for a `body` that is itself optional.
@inlinable @discardableResult
public func droppingAsync<T>(_ reason: DroppedError, isolation: isolated (any Actor)? = #isolation,
                             _ body: () async throws -> T?) async -> T? {
  do { return try await body() } catch { return nil }
}
