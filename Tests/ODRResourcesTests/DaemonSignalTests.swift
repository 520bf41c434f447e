import Foundation
import Testing

@testable import ODRTesting

/// The servers tests start (nginx, moto_server) begin with no signal
/// blocked, whatever the starting thread blocks: odr's in-process commands
/// block SIGINT and SIGTERM in the test process, and a server inheriting
/// that mask ignored the SIGTERM of its stop() (each stop then waited its
/// 2 s for the SIGKILL fallback).
@Suite struct DaemonSignalTests {
  /// The SigBlk mask of /proc/PID/status.
  static func blocked(_ pid: pid_t) throws -> UInt64 {
    let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
    let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("SigBlk:") })
    return try #require(UInt64(line.split(separator: "\t").last.map(String.init) ?? "", radix: 16))
  }

  @Test func aServerStartsWithNoSignalBlocked() throws {
    // Started from a thread that blocks SIGTERM and SIGINT, as odr's commands do.
    nonisolated(unsafe) var started: Result<Daemon, any Error>?
    let done = DispatchSemaphore(value: 0)
    Thread {
      var set = sigset_t()
      sigemptyset(&set)
      sigaddset(&set, SIGTERM)
      sigaddset(&set, SIGINT)
      pthread_sigmask(SIG_BLOCK, &set, nil)
      started = Result { try Daemon("/bin/sleep", ["30"]) }
      done.signal()
    }.start()
    done.wait()
    let daemon = try #require(try started?.get())
    defer { daemon.stop() }
    #expect(try Self.blocked(daemon.pid) == 0)
  }
}
