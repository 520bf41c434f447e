import ArgumentParser

/// What a command runs with, as swiftly's `SwiftlyCoreContext`: the one
/// place where the lean `odr` and `odr-net` differ. `odr-net` passes its
/// network commands; the lean `odr` passes none, and asking it for them is
/// the hand-off to `odr-net` (``NetworkHandoff``).
package struct CommandContext: Sendable {
  /// What this executable can do on the network; nil in the lean `odr`.
  let network: (any NetworkCommands)?

  package init(network: (any NetworkCommands)?) {
    self.network = network
  }

  /// The network commands. In the lean `odr` this never returns: the
  /// process becomes `odr-net`, with the same arguments and environment.
  /// Nothing has been printed or written before a command asks.
  func networked() -> any NetworkCommands {
    guard let network else { NetworkHandoff.exec() }
    return network
  }
}

/// A command that may need what only the context gives (the network).
/// `ODR.main` calls `run(_:)` with the executable's context.
protocol ContextualCommand: AsyncParsableCommand {
  func run(_ context: CommandContext) async throws
}

extension ContextualCommand {
  /// ArgumentParser's entry point, for a command run on its own: the lean
  /// context.
  func run() async throws {
    try await run(CommandContext(network: nil))
  }
}
