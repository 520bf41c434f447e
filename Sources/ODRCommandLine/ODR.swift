import ArgumentParser
import ODRAge
import ODRCI
import ODRTrust

/// The `odr` command: parsing, output and exit codes only; the work is done
/// by the ODR* libraries.
struct ODR: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "odr",
    abstract: "On-Demand Resources for Linux: deliver API keys into the keyring, not the binary.",
    discussion: """
      Keys live in the Secret Service keyring (gnome-keyring, KeePassXC, …), one item per key with the attributes `service` (the bundle id) and `key` (the key name).

      Example:
        printf '%s' "$WEATHER_KEY" | odr set Weather --service com.example.demo
        odr get Weather --service com.example.demo
        secret-tool lookup service com.example.demo key Weather
      """,
    version: "0.1.0",
    subcommands: [Fetch.self, Exec.self, Env.self, HTTP.self, URLCommand.self, Pack.self, Verify.self, Publish.self, Sign.self, KeyringKeyCommand<SigningKey>.self, KeyringKeyCommand<AgeIdentity>.self, Trust.self, Prefetch.self, Begin.self, End.self, ResourcePath.self, Status.self, Priority.self, Purge.self, SetKey.self, GetKey.self, ReadReference.self, Inject.self, ListKeys.self, DeleteKey.self, Doctor.self]
  )
}
