import ODRConfiguration
import ODRKeyring

/// odr.json `"auth"`'s catalog tokens from the Secret Service, as `odr`
/// reads them: only an item stored as a token for the catalog's origin,
/// never one of odr's own services.
///
/// ```swift
/// var configuration = try ODRConfiguration.discover(folder: URL(filePath: "/srv/demo"))
/// configuration.catalogTokens = SecretServiceCatalogTokens(deadline: .seconds(2))
/// ```
public struct SecretServiceCatalogTokens: CatalogTokenSource {
  /// How long one keyring call may take.
  public let deadline: Duration

  public init(deadline: Duration = .seconds(5)) {
    self.deadline = deadline
  }

  public func catalogToken(named name: String, service: String, origin: String) async throws -> String {
    try KeyringInput.validate(keyService: service)
    return try await SecretServiceStore(service: service, deadline: deadline).catalogToken(named: name, origin: origin)
  }
}
