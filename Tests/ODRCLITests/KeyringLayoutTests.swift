import Foundation
import ODRCLITesting
import ODRTesting
import Testing

/// One item per key that every keyring library reads: the built `odr`
/// against the real keyring, with Python's keyring library (its
/// SecretService backend, the lookup go-keyring and Rust's crate make too)
/// and secret-tool as the peers.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct KeyringLayoutTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-layout-\(UUID().uuidString)")
  let service = "com.odr.layout.\(UUID().uuidString.prefix(8).lowercased())"
  var environment: [String: String] {
    var env = KeyringSession.shared.environment
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.SecretService.Keyring"
    env["ODR_SERVICE"] = service
    return env
  }

  func odr(_ arguments: [String], input: String? = nil) async throws -> Command.Result {
    try await Command.odr(arguments, input: input, environment: environment)
  }

  /// Runs Python with `keyring` imported and `service` defined; returns stdout.
  func python(_ script: String) async throws -> String {
    let result = try await Command.run("/usr/bin/env", ["python3", "-c", "import keyring\nservice = '\(service)'\n" + script], environment: environment)
    try #require(result.status == 0, "\(result.stderr)")
    return result.stdout
  }

  /// How many items hold `name` in any layout (read by Python's
  /// secretstorage, not libsecret).
  func items(_ name: String) async throws -> Int {
    try await Command.keyringItems(service: service, environment: environment).count { item in
      ["key", "username", "account"].contains { item[$0] == name }
    }
  }

  @Test func pythonKeyringReadsWhatOdrStoredAndOdrReadsWhatItStored() async throws {
    #expect(try await odr(["set", "Weather"], input: "w-odr").status == 0)
    #expect(try await python("print(keyring.get_password(service, 'Weather'))") == "w-odr\n")
    #expect(try await python("print(keyring.get_credential(service, 'Weather').password)") == "w-odr\n")
    // keytar's lookup: service and account in libsecret's generic schema.
    #expect(try await python("""
      import secretstorage
      items = secretstorage.search_items(secretstorage.dbus_init(), {'service': service, 'account': 'Weather', 'xdg:schema': 'org.freedesktop.Secret.Generic'})
      print([i.get_secret().decode() for i in items])
      """) == "['w-odr']\n")
    // secret-tool's lookup by service and key still works.
    #expect(try await Command.secretTool(["lookup", "service", service, "key", "Weather"], environment: environment).stdout == "w-odr")

    _ = try await python("keyring.set_password(service, 'Maps', 'm-python')")
    #expect(try await odr(["get", "Maps"]).stdout == "m-python")
    #expect(try await odr(["list"]).stdout == "Maps\nWeather\n")
    let env = try await odr(["env", "--format", "json"])
    #expect(env.status == 0 && env.stdout.contains(#""m-python""#) && env.stdout.contains(#""w-odr""#), "\(env.stdout)\(env.stderr)")
    let exec = try await odr(["exec", "--", "sh", "-c", #"[ "$MAPS" = m-python ] && echo injected"#])
    #expect(exec.stdout == "injected\n", "\(exec.stderr)")
    #expect(try await odr(["delete", "Maps"]).status == 0)
    #expect(try await python("print(keyring.get_password(service, 'Maps'))") == "None\n")
    #expect(try await items("Maps") == 0)
  }

  @Test func anotherLibrarysWriteIsReadAndOdrsNextWriteLeavesOneItem() async throws {
    #expect(try await odr(["set", "Weather"], input: "first").status == 0)
    // Python's "replace" matches its own attributes only: a second item.
    _ = try await python("keyring.set_password(service, 'Weather', 'from-python')")
    #expect(try await odr(["get", "Weather"]).stdout == "from-python")
    #expect(try await odr(["list"]).stdout == "Weather\n")
    #expect(try await odr(["set", "Weather"], input: "third").status == 0)
    #expect(try await items("Weather") == 1)
    #expect(try await python("print(keyring.get_password(service, 'Weather'))") == "third\n")
  }

  @Test func itemsWrittenBeforeTheLayoutGainItOnRepair() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    // An item in the old layout (service + key), and two of one key.
    let store = try await Command.secretTool(["store", "--label=old", "service", service, "key", "Old"], input: "o-1", environment: environment)
    try #require(store.status == 0, "\(store.stderr)")
    _ = try await python("keyring.set_password(service, 'Old', 'o-2')")
    #expect(try await items("Old") == 2)
    #expect(try await python("print(keyring.get_password(service, 'Old'))") == "o-2\n")
    let repair = try await odr(["doctor", "--repair"])
    #expect(repair.status == 0, "\(repair.stderr)")
    #expect(try await items("Old") == 1)
    #expect(try await odr(["get", "Old"]).stdout == "o-2")
    let attributes = try await Command.secretTool(["search", "--all", "service", service, "key", "Old"], environment: environment)
    // secret-tool prints attributes on stderr.
    #expect(attributes.stderr.contains("attribute.username = Old") && attributes.stderr.contains("attribute.account = Old"), "\(attributes.stderr)")
  }
}
