import ArgumentParser
import FoundationEssentials
import ODRKeyring
import ODRKeys
import ODRSigning

/// Which signing keys `odr pack` and `odr sign` use: --sign NAME (the
/// keyring) and --sign-key-file F, each repeatable, else $ODR_SIGNING_KEY.
struct SigningKeyOptions: ParsableArguments {
  @Option(help: ArgumentHelp("Sign with this signing key from the keyring (see `odr signing-key`); repeatable: odr pack signs with each (the old key and a new post-quantum one, while moving).", valueName: "name"),
          completion: Completions.privateKeys(service: PrivateKeyring.signingKeyService))
  var sign: [String] = []

  @Option(help: ArgumentHelp("Sign with the exported key in this file (ed25519-secret:… or ed25519-mldsa65-secret:…); repeatable.", valueName: "file"), completion: .file())
  var signKeyFile: [String] = []

  /// The keys, in the order given (keyring names first); empty when none is given.
  func keys(_ context: CommandContext) async throws -> [SigningKey] {
    var keys: [SigningKey] = []
    for name in sign {
      keys.append(try await ODR.KeyringKeyCommand<SigningKey>.key(named: name, in: try StoreOptions.configuredKind(context), context))
    }
    for file in signKeyFile {
      guard let data = FileManager.default.contents(atPath: context.path(file)) else { throw ValidationError("Cannot read the signing key file '\(file)'.") }
      do { keys.append(try SigningKey(String(decoding: data, as: UTF8.self))) } catch let error as TrustError {
        throw error.at(file)
      }
    }
    if keys.isEmpty, let env = context.variable("ODR_SIGNING_KEY") {
      do { keys.append(try SigningKey(env)) } catch let error as TrustError { throw error.at("ODR_SIGNING_KEY") }
    }
    guard Set(keys.map(\.verifyingKey)).count == keys.count else { throw ValidationError("The same signing key is given twice.") }
    return keys
  }
}
