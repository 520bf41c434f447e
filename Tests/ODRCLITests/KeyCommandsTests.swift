import Foundation
import ODRTesting
import Testing

/// The built `odr` binary, run as a user would, against the shared keyring.
@Suite struct KeyCommandsTests {
  let service = "com.odr.cli.\(UUID().uuidString.prefix(8).lowercased())"

  func odr(_ arguments: [String], input: String? = nil) throws -> Command.Result {
    try Command.odr(arguments + ["--service", service], input: input, environment: KeyringSession.shared.environment)
  }

  @Test func setThenGetPrintsTheValueAlone() throws {
    #expect(try odr(["set", "Weather"], input: "k-123\n").status == 0)
    let result = try odr(["get", "Weather"])
    #expect(result.status == 0)
    #expect(result.stdout == "k-123")
  }

  @Test func setKeepsATrailingNewlineWhenAsked() throws {
    #expect(try odr(["set", "Weather", "--keep-newline"], input: "k-123\n").status == 0)
    #expect(try odr(["get", "Weather"]).stdout == "k-123\n")
  }

  @Test func secretToolReadsWhatOdrSetStored() throws {
    #expect(try odr(["set", "Maps"], input: "k-456").status == 0)
    let lookup = try Command.secretTool(["lookup", "service", service, "key", "Maps"], environment: KeyringSession.shared.environment)
    #expect(lookup.stdout == "k-456")
  }

  @Test func listPrintsNamesOnlyAndJSON() throws {
    _ = try odr(["set", "Weather"], input: "value-w")
    _ = try odr(["set", "Maps"], input: "value-m")
    let plain = try odr(["list"])
    #expect(plain.stdout == "Maps\nWeather\n")
    let json = try odr(["list", "--json"])
    let decoded = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
    #expect(decoded?["keys"] as? [String] == ["Maps", "Weather"])
    #expect(decoded?["service"] as? String == service)
  }

  @Test func missingKeyExitsThreeAndSaysNotFound() throws {
    let get = try odr(["get", "Nope"])
    #expect(get.status == 3)
    #expect(get.stderr.contains("No key 'Nope'"))
    #expect(try odr(["delete", "Nope"]).status == 3)
  }

  @Test func deleteRemovesTheKey() throws {
    _ = try odr(["set", "Weather"], input: "v")
    #expect(try odr(["delete", "Weather"]).status == 0)
    #expect(try odr(["get", "Weather"]).status == 3)
  }

  @Test(arguments: [["get", "bad name"], ["set", "9lives"], ["delete", "a/b"], ["get"], ["frobnicate"], ["get", "X", "--timeout", "0"]])
  func usageErrorsExitTwo(arguments: [String]) throws {
    let result = try odr(arguments, input: "v")
    #expect(result.status == 2)
    #expect(!result.stderr.isEmpty)
  }

  @Test func missingServiceIsAUsageError() throws {
    var env = KeyringSession.shared.environment
    env["ODR_SERVICE"] = nil
    let result = try Command.odr(["get", "Weather"], environment: env)
    #expect(result.status == 2)
    #expect(result.stderr.contains("--service"))
  }

  @Test func serviceComesFromTheEnvironment() throws {
    _ = try odr(["set", "Weather"], input: "from-env")
    var env = KeyringSession.shared.environment
    env["ODR_SERVICE"] = service
    #expect(try Command.odr(["get", "Weather"], environment: env).stdout == "from-env")
  }

  @Test func emptyAndOversizedValuesAreRefused() throws {
    #expect(try odr(["set", "Weather"], input: "").status == 2)
    #expect(try odr(["set", "Weather"], input: String(repeating: "x", count: 64 * 1024 + 1)).status == 2)
    #expect(try odr(["list"]).stdout == "")
  }

  @Test func memoryStoreNeedsNoKeyring() throws {
    var env = ProcessInfo.processInfo.environment
    env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"
    let set = try Command.odr(["set", "Weather", "--store", "memory", "--service", service], input: "v", environment: env)
    #expect(set.status == 0)
    // A new process has a new, empty memory store.
    #expect(try Command.odr(["get", "Weather", "--store", "memory", "--service", service], environment: env).status == 3)
  }

  @Test(arguments: [[], ["set"], ["get"], ["list"], ["delete"], ["doctor"]])
  func helpShowsAnExample(subcommand: [String]) throws {
    let result = try Command.odr(subcommand + ["--help"])
    #expect(result.status == 0)
    #expect(result.stdout.contains("Example:"))
  }
}

/// `odr get` has a quick path that skips ArgumentParser for the plain form;
/// it must behave exactly like the full parser.
@Suite struct QuickGetParityTests {
  let service = "com.odr.quick.\(UUID().uuidString.prefix(8).lowercased())"

  /// The same request through the quick path and, made ineligible by an
  /// explicit `--store secret-service`, through ArgumentParser.
  func bothPaths(_ arguments: [String]) throws -> (quick: Command.Result, full: Command.Result) {
    let env = KeyringSession.shared.environment
    return (try Command.odr(arguments, environment: env),
            try Command.odr(arguments + ["--store", "secret-service"], environment: env))
  }

  @Test(arguments: [
    ["get", "Weather"],
    ["get", "Absent"],
    ["get", "Weather", "--timeout", "2"],
    ["get", "Weather", "--timeout", "-1"],
    ["get", "bad name"],
  ])
  func quickAndFullPathsAgree(arguments: [String]) throws {
    _ = try Command.odr(["set", "Weather", "--service", service], input: "k-quick", environment: KeyringSession.shared.environment)
    let (quick, full) = try bothPaths(arguments + ["--service", service])
    #expect(quick.status == full.status)
    #expect(quick.stdout == full.stdout)
    #expect(quick.stderr == full.stderr)
  }

  /// `odr --version` is answered before ArgumentParser; `odr-net` always
  /// goes through it. Both must print the same.
  @Test func versionIsTheSameOnBothPaths() throws {
    let odrNet = Paths.odr.deletingLastPathComponent().appending(path: "odr-net").path
    let quick = try Command.odr(["--version"])
    let full = try Command.run(odrNet, ["--version"])
    #expect(quick.status == 0)
    #expect(quick.stdout == full.stdout)
    #expect(quick.stdout.hasSuffix("\n") && quick.stdout.count > 1)
  }

  @Test func serviceFromTheEnvironmentWorksOnBothPaths() throws {
    _ = try Command.odr(["set", "Weather", "--service", service], input: "k-env", environment: KeyringSession.shared.environment)
    var env = KeyringSession.shared.environment
    env["ODR_SERVICE"] = service
    #expect(try Command.odr(["get", "Weather"], environment: env).stdout == "k-env")
    #expect(try Command.odr(["get", "Weather", "--store", "secret-service"], environment: env).stdout == "k-env")
  }
}

extension KeyCommandsTests {
  @Test func deleteAllEmptiesTheService() throws {
    _ = try odr(["set", "Weather"], input: "w")
    _ = try odr(["set", "Maps"], input: "m")
    let result = try odr(["delete", "--all"])
    #expect(result.status == 0)
    #expect(result.stderr.contains("deleted 2 keys"))
    #expect(try odr(["list"]).stdout == "")
  }

  @Test(arguments: [["delete"], ["delete", "--all", "Weather"]])
  func deleteNeedsNamesOrAllButNotBoth(arguments: [String]) throws {
    #expect(try odr(arguments).status == 2)
  }
}
