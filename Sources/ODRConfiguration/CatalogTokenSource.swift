/// Where odr.json's `"auth"` reads its catalog token: a keyring the program
/// chooses (`odr`: its command's keyring and `--timeout`; an app: ODRKit's
/// Secret Service source, or its own), so the configuration links no
/// keyring itself.
public protocol CatalogTokenSource: Sendable {
  /// The value stored as `name` of `service` if, and only if, it was
  /// stored as a catalog token for `origin` (`scheme://host:port`); any
  /// other item is refused (a repository's odr.json cannot pick keyring
  /// items, or name odr's own services).
  func catalogToken(named name: String, service: String, origin: String) async throws -> String
}
