import ArgumentParser
import FoundationEssentials
import ODRKeyring
import ODRKeys
import ODRSigning

/// Which signing key `odr pack` and `odr sign` use: --sign NAME (the
/// keyring), --sign-key-file F, else $ODR_SIGNING_KEY.
struct SigningKeyOptions: ParsableArguments {
  @Option(help: ArgumentHelp("Sign with this signing key from the keyring (see `odr signing-key`).", valueName: "name"),
          completion: Completions.privateKeys(service: PrivateKeyring.signingKeyService))
  var sign: String?

  @Option(help: ArgumentHelp("Sign with the exported key in this file (ed25519-secret:…).", valueName: "file"), completion: .file())
  var signKeyFile: String?

  func validate() throws {
    if sign != nil && signKeyFile != nil { throw ValidationError("Pass --sign or --sign-key-file, not both.") }
  }

  /// The key, or nil when none is given.
  func key(_ context: CommandContext) async throws -> SigningKey? {
    if let sign { return try await ODR.KeyringKeyCommand<SigningKey>.key(named: sign, in: try StoreOptions.configuredKind(context), context) }
    if let signKeyFile {
      guard let data = FileManager.default.contents(atPath: context.path(signKeyFile)) else { throw ValidationError("Cannot read the signing key file '\(signKeyFile)'.") }
      do { return try SigningKey(String(decoding: data, as: UTF8.self)) } catch let error as TrustError {
        throw error.at(signKeyFile)
      }
    }
    if let env = context.variable("ODR_SIGNING_KEY") {
      do { return try SigningKey(env) } catch let error as TrustError { throw error.at("ODR_SIGNING_KEY") }
    }
    return nil
  }
}
