import ArgumentParser
import ODRKeyring
import ODRKeys
import ODRTrust
#if canImport(Glibc)
import Glibc
#endif

/// Where the age identities that open encrypted secrets tags come from:
/// `--identity-file`, `$ODR_IDENTITY`, else the keyring (`odr identity`).
struct IdentityOptions: ParsableArguments {
  @Option(name: .customLong("identity-file"), help: ArgumentHelp("An age identity file (AGE-SECRET-KEY-1… lines, as age-keygen writes) to decrypt with; repeatable (default: $ODR_IDENTITY, else the identities in the keyring).", valueName: "file"), completion: .file())
  var identityFiles: [String] = []

  /// The identities, read when an encrypted tag needs them.
  func source(timeout: Double) -> @Sendable () async throws -> [AgeIdentity] {
    let files = identityFiles
    let environment = getenv("ODR_IDENTITY").map { String(cString: $0) }
    return {
      try await PrivateKeyring.identities(environment: environment, files: files) {
        try SecretServiceStore(service: PrivateKeyring.identityService, deadline: StoreOptions.deadline(seconds: timeout))
      }
    }
  }
}
