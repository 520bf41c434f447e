import Foundation
import ODRKeyring
public import ODRTesting

extension Command {
  /// The value of `key` under `service` in the keyring of `environment`'s
  /// D-Bus session, or nil when there is none: read in this process through
  /// libsecret when that session is the test process's own (no process
  /// started), else with `secret-tool lookup`. Tests of secret-tool as a
  /// peer call ``Command/secretTool(_:input:environment:)`` themselves.
  public static func keyringValue(service: String, key: String, environment: [String: String]? = nil) async throws -> String? {
    let bus = "DBUS_SESSION_BUS_ADDRESS"
    guard let environment, environment[bus] != ProcessInfo.processInfo.environment[bus] else {
      do { return try await SecretServiceStore(service: service).value(for: key) } catch let error as KeyringError where error.code == .notFound {
        return nil
      }
    }
    let result = try await secretTool(["lookup", "service", service, "key", key], environment: environment)
    return result.status == 0 ? result.stdout : nil
  }
}

extension Command {
  /// Every item under `service` in the keyring of `environment`'s D-Bus
  /// session, each its attributes and its secret (under `"secret"`), as
  /// Python's secretstorage reads them: a Secret Service client of its own
  /// (not libsecret), one process for all the items.
  public static func keyringItems(service: String, environment: [String: String]) async throws -> [[String: String]] {
    let script = """
      import json, secretstorage, sys
      items = secretstorage.search_items(secretstorage.dbus_init(), {'service': sys.argv[1]})
      print(json.dumps([dict(i.get_attributes(), secret=i.get_secret().decode()) for i in items]))
      """
    let result = try await run("/usr/bin/env", ["python3", "-c", script, service], environment: environment)
    guard result.status == 0 else { throw TestFailure("secretstorage: \(result.stderr)") }
    return try JSONDecoder().decode([[String: String]].self, from: Data(result.stdout.utf8))
  }

  /// The values of `keys` under `service` in the keyring of
  /// `environment`'s D-Bus session (absent: not there), read by Python's
  /// secretstorage in one run: one search per key, as secret-tool's lookup
  /// does, not every item of the service read.
  public static func keyringValues(service: String, keys: [String], environment: [String: String]) async throws -> [String: String] {
    let script = """
      import json, secretstorage, sys
      connection = secretstorage.dbus_init()
      found = {}
      for key in sys.argv[2:]:
          items = secretstorage.search_items(connection, {'service': sys.argv[1], 'key': key})
          item = next(iter(items), None)
          if item is not None:
              found[key] = item.get_secret().decode()
      print(json.dumps(found))
      """
    let result = try await run("/usr/bin/env", ["python3", "-c", script, service] + keys, environment: environment)
    guard result.status == 0 else { throw TestFailure("secretstorage: \(result.stderr)") }
    return try JSONDecoder().decode([String: String].self, from: Data(result.stdout.utf8))
  }
}
