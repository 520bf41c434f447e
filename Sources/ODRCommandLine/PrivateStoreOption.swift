import ArgumentParser
import ODRKeyring

/// `--store` of `odr identity` and `odr signing-key`: where this machine's
/// private keys are kept, as for every key command.
struct PrivateStoreOption: ParsableArguments {
  @Option(name: .long, help: ArgumentHelp("Where it is kept: secret-service (the desktop keyring) or kernel (the kernel keyring: no D-Bus, emptied at reboot). Default: $ODR_STORE, else odr.json \"store\", else secret-service.", valueName: "store"))
  var store: KeyStoreKind?

  /// `--store`, else the configured kind.
  func kind(_ context: CommandContext) throws -> KeyStoreKind {
    try store ?? StoreOptions.configuredKind(context)
  }
}
