import Foundation

/// Runs a program to completion and captures what it printed.
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
    /// stdout and stderr together, for searching.
    public var output: String { stdout + stderr }
  }

  /// Runs `executable` with `arguments`, feeding `input` on stdin.
  public static func run(_ executable: String, _ arguments: [String], input: String? = nil,
                         environment: [String: String]? = nil) throws -> Result {
    let process = Process()
    process.executableURL = URL(filePath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = stderr
    let clock = ContinuousClock()
    let start = clock.now
    try process.run()
    if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
    try stdin.fileHandleForWriting.close()
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

  /// `run` on a thread of its own, for long runs (stress tests): waiting
  /// on one of the few cooperative threads would starve other tests.
  public static func runOffPool(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) async throws -> Result {
    try await offPool { try run(executable, arguments, environment: environment) }
  }

  /// Runs blocking `body` on a thread of its own and waits without holding
  /// a cooperative thread.
  public static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
      Thread { continuation.resume(with: Swift.Result { try body() }) }.start()
    }
  }

  /// Runs the built `odr` binary.
  public static func odr(_ arguments: [String], input: String? = nil, environment: [String: String]? = nil) throws -> Result {
    try run(Paths.odr.path, arguments, input: input, environment: environment)
  }

  /// `odr` on a thread of its own: the test waits without holding one of
  /// the cooperative pool's few threads.
  public static func odrOffPool(_ arguments: [String], input: String? = nil, environment: [String: String]? = nil) async throws -> Result {
    try await offPool { try odr(arguments, input: input, environment: environment) }
  }

  /// Runs `secret-tool`, the Secret Service reference client.
  public static func secretTool(_ arguments: [String], input: String? = nil, environment: [String: String]? = nil) throws -> Result {
    try run("/usr/bin/secret-tool", arguments, input: input, environment: environment)
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
