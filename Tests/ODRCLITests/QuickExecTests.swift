import Foundation
@testable import ODRCommandLine
import ODRKeyring
import ODRCLITesting
import ODRTesting
import Testing

/// `odr exec` has a quick path that skips ArgumentParser for its plain form
/// (QuickExec); it takes only that form and behaves exactly like the full
/// parser.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct QuickExecTests {
  let service = "com.odr.quickexec.\(UUID().uuidString.prefix(8).lowercased())"

  @Test(arguments: [
    (["exec", "--service", "a.b", "--", "env"], "a.b|nil|false|true|5.0|env"),
    (["exec", "--", "sh", "-c", "x", "--service", "b"], "from.env|nil|false|true|5.0|sh -c x --service b"),
    (["exec", "--only", "A,B", "--only", "C", "--no-mask", "--pristine", "--timeout", "2", "--", "true"], "from.env|A B C|true|false|2.0|true"),
    (["exec", "--only", ",", "--", "true"], "from.env|nil|false|true|5.0|true"),
    (["exec", "--no-mask", "--mask", "--", "true"], "from.env|nil|false|true|5.0|true"),
    (["exec", "--store", "kernel", "--", "true"], "from.env|kernel|nil|false|true|5.0|true"),
  ])
  func thePlainFormIsTaken(arguments: [String], expected: String) throws {
    let quick = try #require(QuickExec(arguments: arguments, environment: ["ODR_SERVICE": "from.env"], workingDirectory: Self.noProject))
    let store: [String] = quick.store == .secretService ? [] : [quick.store.rawValue]
    let described = ([quick.service] + store + [quick.only?.joined(separator: " ") ?? "nil", "\(quick.pristine)", "\(quick.mask)",
                                                "\(quick.timeout)", quick.commandLine.joined(separator: " ")]).joined(separator: "|")
    #expect(described == expected)
  }

  @Test(arguments: [
    ["exec", "--", "true"],  // no service: the catalog's bundle is looked up on the full path
    ["exec", "--service", "a.b"],  // no command
    ["exec", "--service", "a.b", "--"],
    ["exec", "--service=a.b", "--", "true"],
    ["exec", "--service", "a.b", "--fetch", "APIKeys", "--", "true"],
    ["exec", "--service", "a.b", "--env-file", ".env", "--", "true"],
    ["exec", "--service", "a.b", "--store", "memory", "--", "true"],
    ["exec", "--service", "a.b", "--timeout", "0", "--", "true"],
    ["exec", "--service", "a.b", "--service", "c.d", "--", "true"],
    ["exec", "--service", "bad service", "--", "true"],
    ["exec", "--service", "odr.identity", "--", "true"],  // odr's own: the full path says why not
    ["exec", "--help", "--", "true"],
    ["exec", "--service", "a.b", "--store", "bogus", "--", "true"],
    ["env", "--service", "a.b", "--", "true"],
  ])
  func anythingElseTakesTheFullPath(arguments: [String]) {
    #expect(QuickExec(arguments: arguments, environment: [:], workingDirectory: Self.noProject) == nil)
  }

  /// A folder with no odr.json above it (a store odr.json could name
  /// sends the quick path to the full one).
  static let noProject = URL(filePath: "/")

  @Test func anOdrJSONOrAnUnknownODRStoreTakesTheFullPath() throws {
    let root = FileManager.default.temporaryDirectory.appending(path: "odr-quick-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    try FileManager.default.createDirectory(at: root.appending(path: ".git"), withIntermediateDirectories: true)
    try Data("{}".utf8).write(to: root.appending(path: "odr.json"))
    let arguments = ["exec", "--service", "a.b", "--", "true"]
    #expect(QuickExec(arguments: arguments, environment: [:], workingDirectory: root) == nil)
    #expect(QuickExec(arguments: arguments, environment: ["ODR_STORE": "kernel"], workingDirectory: root)?.store == .kernel)
    #expect(QuickExec(arguments: arguments, environment: ["ODR_STORE": "nope"], workingDirectory: Self.noProject) == nil)
  }

  /// The same request through the quick path and, made ineligible by an
  /// explicit `--store secret-service`, through ArgumentParser: the
  /// binary's (exec replaces or ends the process, so never in-process).
  @Test(arguments: [
    ["--", "sh", "-c", #"printf '%s|%s' "$WEATHER" "${MAPS-unset}""#],
    ["--no-mask", "--", "sh", "-c", #"printf '%s' "$WEATHER""#],
    ["--only", "Weather", "--", "sh", "-c", #"printf '%s|%s' "$WEATHER" "${MAPS-unset}""#],
    ["--only", "Absent", "--", "true"],
    ["--pristine", "--no-mask", "--", "sh", "-c", #"printf '%s|%s' "$WEATHER" "${SHELL_MARK-unset}""#],
    ["--", "odr-no-such-command"],
    ["--", "sh", "-c", "exit 3"],
  ])
  func quickAndFullPathsAgree(arguments: [String]) async throws {
    var env = KeyringSession.shared.environment
    env["SHELL_MARK"] = "set"
    for (name, value) in ["Weather": "k-quick-w", "Maps": "k-quick-m"] {
      _ = try await Command.odr(["set", name, "--service", service], input: value, environment: env)
    }
    let quick = try await Command.odr(["exec", "--service", service] + arguments, environment: env, process: true)
    let full = try await Command.odr(["exec", "--service", service, "--store", "secret-service"] + arguments, environment: env, process: true)
    #expect(quick.status == full.status)
    #expect(quick.stdout == full.stdout)
    #expect(quick.stderr == full.stderr)
  }
}
