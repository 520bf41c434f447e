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
