public import Foundation
import ODRBase

extension Process {
  /// Waits for the process to exit on a thread of its own, not on the
  /// cooperative pool (which other tests need meanwhile).
  public func exited() async {
    // waiting cannot fail; offPool only rethrows
    _ = await droppingAsync(.cannotFail) { try await Command.offPool { [self] in waitUntilExit() } }
  }
}

extension FileHandle {
  /// ``readLine()`` on a thread of its own, not on the cooperative pool.
  public func nextLine() async -> String? {
    // waiting cannot fail; offPool only rethrows
    (await droppingAsync(.cannotFail) { try await Command.offPool { [self] in readLine() } }) ?? nil
  }
}
