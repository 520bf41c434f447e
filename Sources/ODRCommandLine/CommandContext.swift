import ArgumentParser

/// What a command runs with, as swiftly's `SwiftlyCoreContext`: the one
/// place where `odr` and its helper `odr-http` differ. The helper passes
/// its `odr http` runner; `odr` passes none, and asking it for one is the
/// hand-off to the helper (``HTTPHandoff``).
package struct CommandContext: Sendable {
  /// What runs `odr http`; nil in `odr`.
  let http: (any HTTPRunner)?

  package init(http: (any HTTPRunner)?) {
    self.http = http
  }

  /// The `odr http` runner. In `odr` this never returns: the process
  /// becomes the helper, with the same arguments and environment. Nothing
  /// has been printed or written before a command asks.
  func httpRunner() -> any HTTPRunner {
    guard let http else { HTTPHandoff.exec() }
    return http
  }
}

/// A command that may need what only the context gives (`odr http`).
/// `ODR.main` calls `run(_:)` with the executable's context.
protocol ContextualCommand: AsyncParsableCommand {
  func run(_ context: CommandContext) async throws
}

extension ContextualCommand {
  /// ArgumentParser's entry point, for a command run on its own: `odr`'s
  /// context.
  func run() async throws {
    try await run(CommandContext(http: nil))
  }
}
