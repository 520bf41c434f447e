import ArgumentParser
import ODRKeyring

extension ODR {
  /// `odr delete NAME…`: removes keys.
  struct DeleteKey: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "delete",
      abstract: "Delete keys from the keyring.",
      discussion: """
        Exit code 3 when a named key does not exist (the others are still deleted). --all deletes every key of the service, including items stored by other tools with the same `service` attribute.

        Example:
          odr delete Weather Maps --service com.example.demo
          odr delete --all --service com.example.demo
        """
    )

    @OptionGroup var options: StoreOptions

    @Argument(help: "The key names.", completion: Completions.keys)
    var names: [String] = []

    @Flag(help: "Delete every key of the service.")
    var all = false

    @Flag(name: .shortAndLong, help: "Print nothing on success.")
    var quiet = false

    func validate() throws {
      if names.isEmpty == !all { throw ValidationError("Name the keys to delete, or pass --all (not both).") }
      for name in names {
        do { try KeyringInput.validate(userKeyName: name) } catch { throw ValidationError(error.message) }
      }
    }

    func run(_ context: CommandContext) async throws {
      let store = try await options.makeStoreOfConfiguredBundle(context)
      if all {
        let count = try await store.deleteAll()
        if !quiet { context.output.error("deleted \(count) key\(count == 1 ? "" : "s") from \(store.service)") }
        return
      }
      var missing: [String] = []
      for name in names {
        if try await store.deleteValue(for: name) {
          if !quiet { context.output.error("deleted '\(name)' from \(store.service)") }
        } else {
          missing.append(name)
        }
      }
      if !missing.isEmpty {
        let list = missing.map { "'\($0)'" }.joined(separator: ", ")
        let what = missing.count == 1 ? "No key \(list)" : "No keys \(list)"
        let others = missing.count < names.count ? " (the others were deleted)" : ""
        throw KeyringError(.notFound, "\(what) for service '\(store.service)'; nothing to delete there\(others). `odr list` shows the stored keys.")
      }
    }
  }
}
