import ArgumentParser
import ODRKeyring

extension ODR {
  /// `odr delete NAME…`: removes keys.
  struct DeleteKey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "delete",
      abstract: "Delete keys from the keyring.",
      discussion: """
        Exit code 3 when a named key does not exist (the others are still deleted).

        Example:
          odr delete Weather Maps --service com.example.demo
        """
    )

    @OptionGroup var options: StoreOptions

    @Argument(help: "The key names.")
    var names: [String]

    @Flag(name: .shortAndLong, help: "Print nothing on success.")
    var quiet = false

    func validate() throws {
      if names.isEmpty { throw ValidationError("Name at least one key to delete.") }
      for name in names {
        do { try KeyringInput.validate(name: name) } catch { throw ValidationError(error.message) }
      }
    }

    func run() async throws {
      let store = try options.makeStore()
      var missing: [String] = []
      for name in names {
        if try await store.deleteValue(for: name) {
          if !quiet { Output.error("deleted '\(name)' from \(store.service)") }
        } else {
          missing.append(name)
        }
      }
      if !missing.isEmpty {
        let names = missing.map { "'\($0)'" }.joined(separator: ", ")
        throw KeyringError(.notFound, "No key \(names) for service '\(store.service)'; nothing to delete. `odr list` shows the stored keys.")
      }
    }
  }
}
