public import Foundation
import ODRBase

/// Where the package and its built products are.
public enum Paths {
  /// The package's root folder (holding Package.swift, scripts/ and
  /// Tests/): `$ODR_PACKAGE_ROOT` (scripts/test runs the suite from a copy
  /// an ordinary user owns), else where this file was compiled.
  public static let packageRoot: URL = {
    if let root = ProcessInfo.processInfo.environment["ODR_PACKAGE_ROOT"] { return URL(filePath: root) }
    return URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
  }()

  /// The folder of the products built with the tests (`odr`, `odr-http`,
  /// the example clients).
  public static let products: URL = {
    // no /proc: the path the runner was started by
    let runner = URL(filePath: (dropping(.isTheAnswer) { try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") }) ?? CommandLine.arguments[0])
    return runner.deletingLastPathComponent()
  }()

  /// The `odr` executable: `$ODR_BIN` (scripts/test sets it to the release
  /// build users install), else the one built beside the tests.
  public static let odr: URL = {
    if let bin = ProcessInfo.processInfo.environment["ODR_BIN"] { return URL(filePath: bin) }
    return products.appending(path: "odr")
  }()

  /// The helper `odr http` is handed to: `libexec/odr/odr-http` in the
  /// shipped layout, else beside `odr` (a build folder), as `odr` looks.
  public static let helper: URL = {
    let folder = odr.deletingLastPathComponent()
    let installed = folder.deletingLastPathComponent().appending(path: "libexec/odr/odr-http")
    return FileManager.default.isExecutableFile(atPath: installed.path) ? installed : folder.appending(path: "odr-http")
  }()
}

/// A failure of the test harness itself, with a message that says why.
public struct TestFailure: Error, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}
