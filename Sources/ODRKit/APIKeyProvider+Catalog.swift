public import FoundationEssentials
import ODRBase
import ODRKeyring
import ODRKeys
import ODRAge
import ODRTransports
import ODRTrust

extension APIKeyProvider {
  /// A provider of the keys of `service` whose misses run `odr fetch TAG`
  /// against the catalog of `configuration`, admitted under its trust
  /// (pins, trust state), as `odr fetch` admits it on this machine.
  ///
  /// - Parameters:
  ///   - service: The keyring service: the catalog's bundle id (a catalog
  ///     of another bundle is refused, and nothing is imported).
  ///   - configuration: Where the catalog is and what to trust
  ///     (`ODRConfiguration.discover(_:environment:folder:now:)` reads odr.json
  ///     and the `ODR_*` variables as `odr` does); its catalog token, if
  ///     odr.json asks for one, from its `catalogTokens`, else
  ///     ``SecretServiceCatalogTokens``.
  ///   - tag: The secrets tag to fetch.
  ///   - store: Where the keys are kept (default: the keyring, through
  ///     libsecret).
  ///   - transport: How a network location is read (default: URLSession;
  ///     a server may pass ODRHTTP's `HTTPTransport.init`).
  ///   - identityFiles: Files of age identities, as `odr fetch
  ///     --identity-file` reads them.
  ///   - identities: The age identities that open an encrypted tag
  ///     (default: `ODR_IDENTITY`, else the identity files given, else the
  ///     identities in the keyring, as `odr fetch` finds them; with a
  ///     `KernelKeyringStore`, those in the kernel keyring: never the bus).
  ///
  /// ```swift
  /// let provider = try APIKeyProvider(service: "com.example.demo", configuration: .discover(folder: URL(filePath: "/srv/demo")))
  /// let key = try await provider.key("Weather")
  /// ```
  public init(service: String, configuration: ODRConfiguration, tag: String = "APIKeys", store: (any SecretStore)? = nil,
              transport: @escaping @Sendable (NetworkLocation) throws -> any BlobTransport = { URLSessionTransport($0) },
              identityFiles: [String] = [], identities: (@Sendable () async throws -> [AgeIdentity])? = nil) throws {
    let store = try store ?? SecretServiceStore(service: service)
    let identities = identities ?? {
      try await PrivateKeyring.identities(environment: configuration.environment["ODR_IDENTITY"], files: identityFiles) {
        if store.kind == .kernel { return try KernelKeyringStore(service: PrivateKeyring.identityService) }
        return try SecretServiceStore(service: PrivateKeyring.identityService)
      }
    }
    // An app that pins its publisher's keys is served only keys imported under them.
    let roots = configuration.trust.pinned.isEmpty ? nil : Set(configuration.trust.pinned.map(\.description))
    let configuration = {
      var configuration = configuration
      configuration.catalogTokens = configuration.catalogTokens ?? SecretServiceCatalogTokens()
      return configuration
    }()
    self.init(store: store, roots: roots) {
      let catalog = try await configuration.loadCatalog(transport: try await configuration.transport(network: transport))
      // The catalog names its bundle; an app's keys come only from its own
      // (an odr.json or a mirror cannot make another bundle's keys, or a
      // stranger's, replace them).
      guard catalog.catalog.bundle == store.service else {
        throw ResourceError(.integrity, "The catalog at \(catalog.location.redacted) is for \(catalog.catalog.bundle), not \(store.service); nothing was imported. Check the catalog location (odr.json, ODR_CATALOG) or the service.")
      }
      // Packs with awskms: recipients open with the AWS credentials the
      // environment names (a CI job's web identity), asked through URLSession.
      let kms = AWSKMS.fromEnvironment(configuration.environment, http: URLSessionTransport())
      _ = try await KeyImporter(catalog: catalog, store: store, identities: identities, keyService: kms).fetch(tags: [tag])
    }
  }

  /// A provider of the keys of `store`'s service whose misses fetch `tag`
  /// from the catalog at `catalog` (a folder, or an http(s) or s3:// URL),
  /// admitted under `trust` (pin the publisher's key there).
  ///
  /// ```swift
  /// let provider = try APIKeyProvider(
  ///   store: SecretServiceStore(service: "com.example.demo"),
  ///   catalog: URL(string: "https://cdn.example.com/odr/")!,
  ///   trust: TrustPolicy(pinned: [VerifyingKey("ed25519:…")]))
  /// ```
  public init(store: any SecretStore, catalog: URL, tag: String = "APIKeys", trust: TrustPolicy = TrustPolicy(),
              transport: @escaping @Sendable (NetworkLocation) throws -> any BlobTransport = { URLSessionTransport($0) },
              identities: (@Sendable () async throws -> [AgeIdentity])? = nil) throws {
    try self.init(service: store.service, configuration: ODRConfiguration(locations: [catalog], trust: trust), tag: tag, store: store,
                  transport: transport, identities: identities)
  }
}
