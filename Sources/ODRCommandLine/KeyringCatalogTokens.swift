import ODRConfiguration
import ODRKeyring

/// odr.json `"auth"`'s catalog tokens from a command's keyring, with the
/// command's `--timeout` for each call (the default where it has none).
struct KeyringCatalogTokens: CatalogTokenSource {
  let keyring: CommandContext.Keyring
  let deadline: Duration

  func catalogToken(named name: String, service: String, origin: String) async throws -> String {
    try KeyringInput.validate(keyService: service)
    return try await keyring(service, deadline).catalogToken(named: name, origin: origin)
  }
}
