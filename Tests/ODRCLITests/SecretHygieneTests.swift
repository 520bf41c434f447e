import Foundation
import ODRCLITesting
import ODRTesting
import Testing

/// Secret values never reach argv, `odr list`, error messages or log lines.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct SecretHygieneTests {
  let service = "com.odr.hygiene.\(UUID().uuidString.prefix(8).lowercased())"
  let secret = "sk-live-\(UUID().uuidString)"

  @Test func setTakesTheValueFromStdinNeverArgv() async throws {
    let process = Process()
    process.executableURL = Paths.odr
    process.arguments = ["set", "Weather", "--service", service]
    process.environment = KeyringSession.shared.environment
    let stdin = Pipe()
    process.standardInput = stdin
    process.standardError = Pipe()
    try process.run()
    // While odr waits for the value, its argv is visible to every user.
    var cmdline = ""
    for _ in 0..<200 where !cmdline.contains("Weather") {
      try await Task.sleep(for: .milliseconds(10))  // until the child has exec'd odr
      cmdline = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/cmdline", encoding: .utf8)) ?? ""
    }
    #expect(cmdline.contains("Weather"))
    stdin.fileHandleForWriting.write(Data(secret.utf8))
    try stdin.fileHandleForWriting.close()
    await process.exited()
    #expect(process.terminationStatus == 0)
    #expect(!cmdline.contains(secret))
  }

  @Test func noCommandButGetPrintsTheValue() async throws {
    let env = KeyringSession.shared.environment
    func odr(_ arguments: [String], input: String? = nil) async throws -> Command.Result {
      try await Command.odr(arguments + ["--service", service], input: input, environment: env)
    }
    let outputs = [
      try await odr(["set", "Weather"], input: secret),
      try await odr(["set", "Weather"], input: secret + "changed"),
      try await odr(["set", "bad name"], input: secret),
      try await odr(["set", "Empty"], input: ""),
      try await odr(["set", "Huge"], input: secret + String(repeating: "x", count: 70_000)),
      try await odr(["list"]),
      try await odr(["list", "--json"]),
      try await odr(["get", "Absent"]),
      try await odr(["delete", "Absent"]),
      try await Command.odr(["doctor", "--json"], environment: env),
      try await Command.odr(["get", "Weather", "--service", service], environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"]),
    ]
    for result in outputs {
      #expect(!result.output.contains(secret), "\(result.output)")
    }
    #expect(try await odr(["get", "Weather"]).stdout == secret + "changed")
  }
}
