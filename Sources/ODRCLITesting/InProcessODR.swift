public import Foundation
import ODRBase
import ODRCommandLine
import ODRHTTPCommand
import ODRKeyring
public import ODRTesting
#if canImport(System)
import System
#else
import SystemPackage
#endif

/// Runs odr's commands in the test process, as `odr` would run them, with a
/// ``CommandContext`` of the test's own: its environment and folders, stdin
/// from `input`, stdout and stderr captured, the keyring of the test's
/// D-Bus session. No process is started, so a command costs what its work
/// costs.
enum InProcessODR {
  /// The commands whose behaviour is the process's own: `exec` replaces or
  /// supervises a process, completion answers before the concurrency
  /// runtime starts. `http` and `url` run here as in their helper,
  /// `odr-http` (with its runner); odr's hand-over to it is
  /// NetworkCommandsTests' own.
  static let processCommands: Set<String> = ["exec", "---completion"]

  /// The commands that never load the keyring's libraries, so never reach
  /// a D-Bus session (KernelStoreCommandTests reads the dynamic loader's
  /// log of the first four; `url` checks strings, `help` prints): they run
  /// here whatever bus the environment names.
  static let keyringFreeCommands: Set<String> = ["begin", "path", "status", "verify", "url", "help"]

  /// Whether `arguments` can run here: not a process command, and the
  /// environment's session bus (libsecret's is this process's) is the test
  /// process's own, or the command never asks a keyring.
  static func canRun(_ arguments: [String], environment: [String: String]?) -> Bool {
    guard !processCommands.contains(arguments.first ?? "") else { return false }
    return !hasForeignBus(environment) || keyringFreeCommands.contains(arguments.first ?? "")
  }

  /// Whether `environment` names another session bus than this process's
  /// (or none, where this process has one).
  static func hasForeignBus(_ environment: [String: String]?) -> Bool {
    let bus = "DBUS_SESSION_BUS_ADDRESS"
    return environment.map { $0[bus] != ProcessInfo.processInfo.environment[bus] } ?? false
  }

  /// Runs `odr arguments` here; `environment` replaces the test's own when
  /// given; `folder` is the working folder (default: the test's).
  static func run(_ arguments: [String], input: String?, environment: [String: String]?, in folder: URL?) async throws -> Command.Result {
    let environment = environment ?? ProcessInfo.processInfo.environment
    let stdout = Output.Captured(), stderr = Output.Captured()
    let stdin = try Command.stdinPipe(input ?? "")
    defer { dropping(.cleanup) { try stdin.close() } }  // the read end, this run's alone
    // A keyring-free command run for another bus must not reach this one's.
    let command = arguments.first ?? ""
    let keyring: CommandContext.Keyring = if hasForeignBus(environment) {
      { @Sendable (_: String, _: Duration) throws -> any SecretStore in
        throw TestFailure("odr \(command) asked the keyring in a test run for another D-Bus session; run it with process: true")
      }
    } else {
      CommandContext.secretService(environment)
    }
    let context = CommandContext(
      network: .runner(URLSessionHTTPRunner()), keyring: keyring,
      output: Output(stdout: .buffer(stdout), stderr: .buffer(stderr), columns: Int(environment["COLUMNS"] ?? "") ?? 80),
      input: stdin, environment: environment,
      workingDirectory: folder ?? URL(filePath: FileManager.default.currentDirectoryPath, directoryHint: .isDirectory),
      pinHolder: getpid(), handlesSignals: false)
    let clock = ContinuousClock()
    let start = clock.now
    let status = await CommandLineTool.run(arguments, in: context)
    return Command.Result(status: status, signaled: false, stdout: stdout.text, stderr: stderr.text, duration: clock.now - start)
  }
}

extension Command {
  /// Runs `odr arguments` to completion: in this process (``InProcessODR``)
  /// wherever the behaviour under test is not the process itself, else the
  /// built binary (`exec`, completion, another D-Bus
  /// session, or `process: true`). `folder`: the working folder. Either way
  /// it takes a slot (``ChildSlots``); `exclusive` takes them all, for a run
  /// whose duration a test asserts.
  public static func odr(_ arguments: [String], input: String? = nil, environment: [String: String]? = nil,
                         in folder: URL? = nil, exclusive: Bool = false, process: Bool = false) async throws -> Result {
    if !process, InProcessODR.canRun(arguments, environment: environment) {
      return try await ChildSlots.shared.holding(all: exclusive, label: "in-process odr " + arguments.prefix(2).joined(separator: " ")) {
        try await InProcessODR.run(arguments, input: input, environment: environment, in: folder)
      }
    }
    return try await odrProcess(arguments, input: input, environment: environment, in: folder, exclusive: exclusive)
  }
}
