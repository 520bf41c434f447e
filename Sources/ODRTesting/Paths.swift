public import Foundation

/// Where the package and its built products are.
public enum Paths {
  /// The package's root folder (holding Package.swift and scripts/).
  public static let packageRoot: URL = URL(filePath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  /// The `odr` executable: `$ODR_BIN`, else the one built beside the tests.
  public static let odr: URL = {
    if let bin = ProcessInfo.processInfo.environment["ODR_BIN"] { return URL(filePath: bin) }
    let runner = URL(filePath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
    return runner.deletingLastPathComponent().appending(path: "odr")
  }()
}

/// A failure of the test harness itself, with a message that says why.
public struct TestFailure: Error, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}
