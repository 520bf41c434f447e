import ArgumentParser
import ODRAge
import ODRKeyring
import ODRKeys

/// Where the age identities that open encrypted secrets tags come from:
/// `--identity-file`, `$ODR_IDENTITY`, else the keyring (`odr identity`).
struct IdentityOptions: ParsableArguments {
  @Option(name: .customLong("identity-file"), help: ArgumentHelp("An age identity file (AGE-SECRET-KEY-1… lines, as age-keygen writes) to decrypt with; repeatable (default: $ODR_IDENTITY, else the identities in the keyring).", valueName: "file"), completion: .file())
  var identityFiles: [String] = []

  /// The identities, read when an encrypted tag needs them.
  func source(timeout: Double, _ context: CommandContext) -> @Sendable () async throws -> [AgeIdentity] {
    let files = identityFiles.map(context.path)
    let environment = context.environment["ODR_IDENTITY"]
    let keyring = context.keyring
    return {
      try await PrivateKeyring.identities(environment: environment, files: files) {
        try keyring(PrivateKeyring.identityService, StoreOptions.deadline(seconds: timeout))
      }
    }
  }
}
