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
    try await secretstorage("""
      items = secretstorage.search_items(connection, {'service': sys.argv[1]})
      print(json.dumps([dict(i.get_attributes(), secret=i.get_secret().decode()) for i in items]))
      """, [service], environment: environment)
  }

  /// The values of `keys` under `service` in the keyring of
  /// `environment`'s D-Bus session (absent: not there), read by Python's
  /// secretstorage in one run: one search per key, as secret-tool's lookup
  /// does, not every item of the service read.
  public static func keyringValues(service: String, keys: [String], environment: [String: String]) async throws -> [String: String] {
    try await secretstorage("""
      found = {}
      for key in sys.argv[2:]:
          item = next(iter(secretstorage.search_items(connection, {'service': sys.argv[1], 'key': key})), None)
          if item is not None:
              found[key] = item.get_secret().decode()
      print(json.dumps(found))
      """, [service] + keys, environment: environment)
  }

  /// What `script` prints as JSON, run by Python with `secretstorage`,
  /// `json` and `sys` imported and `connection` open on `environment`'s
  /// session bus.
  private static func secretstorage<T: Decodable>(_ script: String, _ arguments: [String], environment: [String: String]) async throws -> T {
    let prelude = "import json, secretstorage, sys\nconnection = secretstorage.dbus_init()\n"
    let result = try await run("/usr/bin/env", ["python3", "-c", prelude + script] + arguments, environment: environment)
    guard result.status == 0 else { throw TestFailure("secretstorage: \(result.stderr)") }
    return try JSONDecoder().decode(T.self, from: Data(result.stdout.utf8))
  }
}
