import ArgumentParser
import ODRAge
import ODRExec
import ODRSigning

/// The `odr` command: parsing, output and exit codes only; the work is done
/// by the ODR* libraries.
struct ODR: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "odr",
    abstract: "On-Demand Resources for Linux: deliver API keys into the keyring, not the binary.",
    discussion: """
      Keys live in the Secret Service keyring (gnome-keyring, KeePassXC, …), one item per key with the attributes `service` (the bundle id) and `key` (the key name); on a server without a desktop, in the kernel keyring (--store kernel).

      Example:
        printf '%s' 'k-123' | odr set Weather --service com.example.demo
        odr get Weather --service com.example.demo
        secret-tool lookup service com.example.demo key Weather
      """,
    version: "0.1.0",
    groupedSubcommands: [
      CommandGroup(name: "Key", subcommands: [SetKey.self, GetKey.self, ListKeys.self, DeleteKey.self, ReadReference.self, Inject.self, Doctor.self]),
      CommandGroup(name: "Delivery", subcommands: [Fetch.self, Exec.self, Env.self, HTTP.self, URLCommand.self]),
      CommandGroup(name: "Resource", subcommands: [Begin.self, End.self, ResourcePath.self, Status.self, Prefetch.self, Priority.self, Purge.self]),
      CommandGroup(name: "Publishing", subcommands: [Pack.self, Verify.self, Publish.self, Sign.self, KeyringKeyCommand<SigningKey>.self]),
      CommandGroup(name: "Trust", subcommands: [Trust.self, KeyringKeyCommand<AgeIdentity>.self]),
    ]
  )
}
