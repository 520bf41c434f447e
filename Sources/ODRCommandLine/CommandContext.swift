import ArgumentParser
package import FoundationEssentials
import ODRBase
package import ODRKeyring
package import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Everything a command runs with, as swiftly's `SwiftlyCoreContext`: the
/// network, the keyring, stdin/stdout/stderr, the environment, the working
/// folder, the clock. ``process(network:)`` builds `odr`'s from the
/// process, the one place that reads it; a test builds its own and runs a
/// command in its own process (``CommandLineTool/run(_:in:)``).
package struct CommandContext: Sendable {
  /// How `odr http` and `odr url` are run.
  package enum Network: Sendable {
    /// By this runner, in this process (`odr-http`).
    case runner(any HTTPRunner)
    /// By the helper, `odr-http`, which replaces this process (`odr`).
    case handOff
    /// Not at all (a command run inside another program, such as a test).
    case unavailable
  }

  /// Makes the keyring store of a service, with a deadline for each call.
  package typealias Keyring = @Sendable (_ service: String, _ deadline: Duration) throws -> any SecretStore

  package var network: Network
  package var keyring: Keyring
  package var output: Output
  /// Standard input (secrets typed or piped, request bodies).
  package var input: FileDescriptor
  package var environment: [String: String]
  /// Where relative paths in arguments and odr.json's discovery start.
  package var workingDirectory: URL
  package var now: @Sendable () -> Date
  /// The process that holds `odr begin`'s pins by default: odr's parent.
  package var pinHolder: Int32
  /// Whether Ctrl-C and SIGTERM cancel a download (``Interruption``): only
  /// a process of its own handles signals.
  package var handlesSignals: Bool

  package init(network: Network, keyring: @escaping Keyring, output: Output, input: FileDescriptor,
               environment: [String: String], workingDirectory: URL, now: @escaping @Sendable () -> Date = { Date() },
               pinHolder: Int32, handlesSignals: Bool) {
    self.network = network
    self.keyring = keyring
    self.output = output
    self.input = input
    self.environment = environment
    self.workingDirectory = workingDirectory
    self.now = now
    self.pinHolder = pinHolder
    self.handlesSignals = handlesSignals
  }

  /// The context of the `odr` (or `odr-http`) process: its descriptors,
  /// environment, folder and parent, the desktop keyring.
  package static func process(network: Network) -> CommandContext {
    let environment = processEnvironment
    return CommandContext(
      network: network, keyring: secretService(environment), output: .process(), input: .standardInput, environment: environment,
      workingDirectory: processWorkingDirectory,
      pinHolder: getppid(), handlesSignals: true)
  }

  /// The environment of this process.
  static var processEnvironment: [String: String] { ProcessInfo.processInfo.environment }

  /// The working folder of this process.
  static var processWorkingDirectory: URL { URL(filePath: FileManager.default.currentDirectoryPath, directoryHint: .isDirectory) }

  /// The Secret Service stores, their imports locked under `environment`'s
  /// state folder, asking the desktop to unlock only where `environment`
  /// has a display.
  package static func secretService(_ environment: [String: String]) -> Keyring {
    let stateHome = XDGFolders(environment: environment).stateHome
    let display = ["DISPLAY", "WAYLAND_DISPLAY"].contains { environment[$0]?.isEmpty == false }
    return { service, deadline in
      try SecretServiceStore(service: service, deadline: deadline, stateHome: stateHome, asksToUnlock: display)
    }
  }

  /// The XDG folders of ``environment``.
  var folders: XDGFolders { XDGFolders(environment: environment) }

  /// `path` as the user typed it, from the working folder when relative.
  func path(_ path: String) -> String {
    path.hasPrefix("/") || path.isEmpty ? path : workingDirectory.appending(path: path).path
  }

  /// ``path(_:)`` as a file URL.
  func url(_ path: String) -> URL { URL(filePath: self.path(path)) }

  /// `name` from the environment when set and not empty.
  func variable(_ name: String) -> String? {
    environment[name].flatMap { $0.isEmpty ? nil : $0 }
  }

  /// The `odr http` runner. In `odr` this never returns: the process
  /// becomes the helper, with the same arguments and environment. Nothing
  /// has been printed or written before a command asks.
  func httpRunner() throws -> any HTTPRunner {
    switch network {
    case .runner(let runner): return runner
    case .handOff: HTTPHandoff.exec(output)
    case .unavailable: throw CommandFailure("odr http and odr url run in odr's helper process, odr-http, which this context does not start.", code: 1)
    }
  }
}

/// A command that runs with a ``CommandContext``: every odr command.
/// ``CommandLineTool`` calls `run(_:)`; ArgumentParser's `run()` is never
/// the way in.
protocol ContextualCommand: AsyncParsableCommand {
  func run(_ context: CommandContext) async throws
}

extension ContextualCommand {
  /// Not used: odr runs commands through ``CommandLineTool``, with a context.
  func run() async throws {
    throw CommandFailure("internal error: \(Self._commandName) was run without a context.", code: 1)
  }
}

extension CommandContext {
  /// This context, its stderr lines said only when new in `repeats`'s
  /// rounds (``Output/sayingOnce(_:)``).
  func sayingOnce(_ repeats: Output.Repeats) -> CommandContext {
    var context = self
    context.output = output.sayingOnce(repeats)
    return context
  }
}
