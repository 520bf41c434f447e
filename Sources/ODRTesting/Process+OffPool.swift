public import Foundation

extension Process {
  /// Waits for the process to exit on a thread of its own, not on the
  /// cooperative pool (which other tests need meanwhile).
  public func exited() async {
    _ = try? await Command.offPool { [self] in waitUntilExit() }
  }
}

extension FileHandle {
  /// ``readLine()`` on a thread of its own, not on the cooperative pool.
  public func nextLine() async -> String? {
    (try? await Command.offPool { [self] in readLine() }) ?? nil
  }
}
