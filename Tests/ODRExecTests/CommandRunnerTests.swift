import Foundation
import Testing

@testable import ODRExec

/// What `odr exec` gives its command, decided from the command's context
/// (its environment and PATH), not from the process that runs it.
@Suite struct CommandRunnerTests {
  static let base = ["PATH": "/opt/tools/bin", "HOME": "/home/a", "EDITOR": "vi", "ODR_IDENTITY": "AGE-SECRET-KEY-1X",
                     "ODR_SIGNING_KEY": "ed25519-secret:x", "Weather": "old"]

  @Test(arguments: [
    (false, ["EDITOR=vi", "HOME=/home/a", "ODR_WITHHELD=ODR_IDENTITY,ODR_SIGNING_KEY", "PATH=/opt/tools/bin", "Weather=new"]),
    (true, ["HOME=/home/a", "ODR_WITHHELD=ODR_IDENTITY,ODR_SIGNING_KEY", "PATH=/opt/tools/bin", "Weather=new"]),
  ])
  func theEnvironmentIsTheContextsWithTheKeysOverItAndOdrsOwnKeysWithheld(pristine: Bool, expected: [String]) {
    #expect(CommandRunner.environment(with: [("Weather", "new")], pristine: pristine, base: Self.base) == expected)
  }

  @Test func theCommandIsFoundInTheContextsPath() throws {
    let folder = FileManager.default.temporaryDirectory.appending(path: "odr-path-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let tool = folder.appending(path: "odr-test-tool")
    try Data("#!/bin/sh\n".utf8).write(to: tool)
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: tool.path)
    #expect(try CommandRunner.resolve("odr-test-tool", searchPath: "/nonexistent:\(folder.path)") == tool.path)
    #expect(throws: ExecError.self) { try CommandRunner.resolve("odr-test-tool", searchPath: "/usr/bin:/bin") }
  }
}
