import ODRBase
import ArgumentParser
import ODRAge
import ODRExec
import ODRKeyring
import ODRKeys
import ODRKeyFormat
import ODRHTTP
import ODRTransports

/// Where the age identities that open encrypted secrets tags come from:
/// `--identity-file`, `$ODR_IDENTITY`, else the store the keys go to
/// (`odr identity`; with `--store kernel`, the kernel keyring: never the bus).
struct IdentityOptions: ParsableArguments {
  @Option(name: .customLong("identity-file"), help: ArgumentHelp("An age identity file (AGE-SECRET-KEY-1… lines, as age-keygen writes) to decrypt with; repeatable (default: $ODR_IDENTITY, else the identities in the keyring).", valueName: "file"), completion: .file())
  var identityFiles: [String] = []

  /// `error` with why this process has no identity, when it runs under
  /// `odr exec`, which never passes ODR_IDENTITY on.
  static func explained(_ error: any Error, _ context: CommandContext) -> any Error {
    guard let error = error as? KeysError, error.code == .notRecipient,
          context.variable(CommandRunner.withheldMarker)?.split(separator: ",").contains("ODR_IDENTITY") == true else { return error }
    return KeysError(error.code, "\(error.message) This command runs under `odr exec`, which never passes ODR_IDENTITY on (a command gets the API keys, not what decrypts them): let the outer odr read the pack (`odr exec --fetch TAG -- CMD`), or give this command its identity yourself (--identity-file).", underlying: error)
  }

  /// AWS KMS with the AWS credentials the environment names (the variables,
  /// a web identity, GitHub's OIDC token, a profile), for packs with
  /// `awskms:` recipients; nil when it names none. Nothing is asked of AWS
  /// until a pack needs it.
  static func keyService(_ context: CommandContext) -> AWSKMS? {
    AWSKMS.fromEnvironment(context.environment, http: HTTPTransport())
  }

  /// The identities, read when an encrypted tag needs them.
  func source(_ keyring: StoreOptions, _ context: CommandContext) -> @Sendable () async throws -> [AgeIdentity] {
    let files = identityFiles.map(context.path)
    let environment = context.environment["ODR_IDENTITY"]
    let (kind, timeout) = (keyring.store, keyring.timeout)
    return {
      try await PrivateKeyring.identities(environment: environment, files: files) {
        try StoreOptions.privateStore(PrivateKeyring.identityService, kind: kind ?? StoreOptions.configuredKind(context), timeout: timeout, context)
      }
    }
  }
}
