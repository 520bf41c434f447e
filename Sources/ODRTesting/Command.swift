public import Foundation
import ODRBase
import Subprocess
#if canImport(System)
package import System
#else
package import SystemPackage
#endif

/// Runs a program to completion and captures what it printed.
///
/// The `async` functions await the child without holding a thread (swift-
/// subprocess: a pidfd watched by one monitor thread, pipes read
/// asynchronously), so a test waiting for a slow child leaves the
/// cooperative pool to the other tests.
public enum Command {
  /// What a finished program left behind.
  public struct Result: Sendable {
    /// The exit code, or the signal number when `signaled`.
    public let status: Int32
    /// True when the program was ended by a signal.
    public let signaled: Bool
    public let stdout: String
    public let stderr: String
    /// Wall-clock time from launch to exit.
    public let duration: Duration

    package init(status: Int32, signaled: Bool, stdout: String, stderr: String, duration: Duration) {
      (self.status, self.signaled, self.stdout, self.stderr, self.duration) = (status, signaled, stdout, stderr, duration)
    }
    /// stdout and stderr together, for searching.
    public var output: String { stdout + stderr }
  }

  /// The most a child may print on each of stdout and stderr.
  static let outputLimit = 256 << 20

  /// Runs `executable` with `arguments`, feeding `input` on stdin (an empty
  /// pipe when nil); `environment` replaces the test's own when given.
  ///
  /// It first waits for a free child slot (``ChildSlots``); `exclusive`
  /// takes them all, for a run that is a load of its own (a stress test).
  /// `duration` counts from the launch, not the wait.
  public static func run(_ executable: String, _ arguments: [String], input: String? = nil,
                         environment: [String: String]? = nil, exclusive: Bool = false) async throws -> Result {
    try await ChildSlots.shared.holding(all: exclusive, label: ([executable] + arguments.prefix(2)).joined(separator: " ")) {
      try await launch(executable, arguments, input: input, environment: environment)
    }
  }

  /// Runs `body` while no other test's child runs: for tests that start
  /// their own processes under load.
  public static func exclusively<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
    try await ChildSlots.shared.holding(all: true, label: "exclusively", body)
  }

  private static func launch(_ executable: String, _ arguments: [String], input: String?,
                             environment: [String: String]?) async throws -> Result {
    ChildLog.record(executable, arguments)
    let clock = ContinuousClock()
    let start = clock.now
    let result = try await Subprocess.run(
      .path(FilePath(executable)), arguments: Arguments(arguments), environment: subprocessEnvironment(environment),
      input: .fileDescriptor(try stdinPipe(input ?? ""), closeAfterSpawningProcess: true),
      output: .bytes(limit: outputLimit), error: .bytes(limit: outputLimit))
    let (status, signaled): (Int32, Bool) = switch result.terminationStatus {
    case .exited(let code): (code, false)
    case .signaled(let signal): (signal, true)
    }
    return Result(status: status, signaled: signaled, stdout: String(decoding: result.standardOutput, as: UTF8.self),
                  stderr: String(decoding: result.standardError, as: UTF8.self), duration: clock.now - start)
  }

  /// Runs the built `odr` with `arguments` to completion, in `folder` (the
  /// working folder) when given. It takes a slot (``ChildSlots``);
  /// `exclusive` takes them all, for a run whose duration a test asserts
  /// (no other test's command competes for the cores). ODRCLITesting's
  /// `Command.odr` runs a command in the test process where it can.
  public static func odrProcess(_ arguments: [String], input: String? = nil, environment: [String: String]? = nil,
                                in folder: URL? = nil, exclusive: Bool = false) async throws -> Result {
    guard let folder else { return try await run(Paths.odr.path, arguments, input: input, environment: environment, exclusive: exclusive) }
    return try await run("/bin/sh", ["-c", "cd \"$0\" && exec \"$@\"", folder.path, Paths.odr.path] + arguments,
                         input: input, environment: environment, exclusive: exclusive)
  }

  /// Runs `secret-tool`, the Secret Service reference client.
  public static func secretTool(_ arguments: [String], input: String? = nil, environment: [String: String]? = nil) async throws -> Result {
    try await run("/usr/bin/secret-tool", arguments, input: input, environment: environment)
  }

  /// `run` for set-up code that cannot await (a `static let`): it blocks
  /// the calling thread until the child exits.
  public static func runBlocking(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> Result {
    ChildLog.record(executable, arguments)
    let process = Process()
    process.executableURL = URL(filePath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let stdout = Pipe(), stderr = Pipe()
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = stdout
    process.standardError = stderr
    let clock = ContinuousClock()
    let start = clock.now
    try process.run()
    // Drain both pipes concurrently so a chatty child can't block on a full pipe.
    let errData = LockedBox(Data())
    let group = DispatchGroup()
    group.enter()
    DispatchQueue.global().async {
      errData.value = stderr.fileHandleForReading.readDataToEndOfFile()
      group.leave()
    }
    let outData = stdout.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    return Result(status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal, stdout: String(decoding: outData, as: UTF8.self),
                  stderr: String(decoding: errData.value, as: UTF8.self), duration: clock.now - start)
  }

  /// Runs the built odr with `arguments` on a thread of its own and does
  /// not wait: a test's clean-up in a `defer`, which cannot await and must
  /// not block one of the few cooperative threads while odr runs (a
  /// command a concurrent test's long-lived child keeps a pipe of open
  /// would stall every test behind it).
  public static func odrInBackground(_ arguments: [String], environment: [String: String]? = nil) {
    Thread {
      _ = dropping(.bestEffort) { try runBlocking(Paths.odr.path, arguments, environment: environment) }  // clean-up: its result is nobody's
    }.start()
  }

  /// Runs blocking `body` on a thread of its own and waits without holding
  /// a cooperative thread: for tests that drive a `Process` themselves
  /// (signals, ptys, partial reads).
  public static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
      Thread { continuation.resume(with: Swift.Result { try body() }) }.start()
    }
  }

  /// The read end of a pipe that delivers `text` and then EOF. A thread of
  /// its own writes it, so a child that exits without reading (a refused
  /// command) costs an ignored EPIPE, not a blocked or crashed test.
  package static func stdinPipe(_ text: String) throws -> FileDescriptor {
    _ = ignoreSIGPIPE
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { throw Errno(rawValue: errno) }
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    let writeEnd = ends[1]
    let bytes = Array(text.utf8)
    guard !bytes.isEmpty else {
      close(writeEnd)
      return FileDescriptor(rawValue: ends[0])
    }
    Thread {
      bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
          let written = write(writeEnd, buffer.baseAddress! + offset, buffer.count - offset)
          if written < 0 && errno == EINTR { continue }
          if written <= 0 { break }
          offset += written
        }
      }
      close(writeEnd)
    }.start()
    return FileDescriptor(rawValue: ends[0])
  }

  /// Writing to a pipe whose reader has exited must fail with EPIPE, not
  /// kill the test process.
  private static let ignoreSIGPIPE: Void = { signal(SIGPIPE, SIG_IGN) }()

  private static func subprocessEnvironment(_ environment: [String: String]?) -> Subprocess.Environment {
    guard let environment else { return .inherit }
    return .custom(Dictionary(uniqueKeysWithValues: environment.map { (Subprocess.Environment.Key(stringLiteral: $0.key), $0.value) }))
  }
}

/// A value shared between two threads of a test helper.
final class LockedBox<T>: @unchecked Sendable {
  private let lock = NSLock()
  private var stored: T
  init(_ value: T) { stored = value }
  var value: T {
    get { lock.withLock { stored } }
    set { lock.withLock { stored = newValue } }
  }
}
