import ArgumentParser
import ODRBase
import ODRConfiguration
import ODRKeyring
import ODRCatalog
import ODRResources

/// Which keyring backend to use.
enum StoreKind: String, ExpressibleByArgument, CaseIterable {
  case secretService = "secret-service"
  case memory
}

/// The options every key command shares: which service, which store, and
/// how long a keyring call may take.
struct StoreOptions: ParsableArguments {
  @Option(name: .long, help: ArgumentHelp("The bundle id the keys belong to (default: $ODR_SERVICE, or the catalog's bundle for fetch).", valueName: "bundle-id"))
  var service: String?

  @Option(name: .long, help: "Where keys are kept: secret-service (the desktop keyring) or memory (this process only).")
  var store: StoreKind = .secretService

  @Option(name: .long, help: ArgumentHelp("Seconds one keyring call may take before odr gives up (exit 9).", valueName: "seconds"))
  var timeout: Double = Self.defaultTimeout

  static let defaultTimeout = 5.0
  static let validTimeouts = 0.001...600.0

  func validate() throws {
    guard Self.validTimeouts.contains(timeout) else {
      throw ValidationError("--timeout must be more than 0 and at most 600 seconds (for example --timeout 0.5 or --timeout 60).")
    }
  }

  static func deadline(seconds: Double) -> Duration { .milliseconds(Int((seconds * 1000).rounded())) }

  /// The store of `service` with these options' backend and deadline.
  /// odr's own services (private keys) are refused: they are reached only
  /// through `odr identity` and `odr signing-key`.
  func makeStore(service: String, _ context: CommandContext) throws -> any SecretStore {
    switch store {
    case .secretService: return try Self.secretService(service, timeout: timeout, context)
    case .memory:
      try KeyringInput.validate(keyService: service)
      try KeyringInput.validate(service: service)
      return MemoryStore(service: service, stateHome: context.folders.stateHome)
    }
  }

  /// The Secret Service store of `service` with a deadline of `timeout`
  /// seconds, as `--store secret-service` makes it (QuickExec).
  static func secretService(_ service: String, timeout: Double, _ context: CommandContext) throws -> any SecretStore {
    try KeyringInput.validate(keyService: service)
    return try context.keyring(service, deadline(seconds: timeout))
  }

  /// The store these options select, for `--service`, else `$ODR_SERVICE`,
  /// else `defaultService` (a catalog's bundle).
  func makeStore(_ context: CommandContext, defaultService: String? = nil) throws -> any SecretStore {
    guard let service = service ?? context.variable("ODR_SERVICE") ?? defaultService else {
      throw ValidationError("No service: pass --service BUNDLE_ID (for example --service com.example.demo) or set ODR_SERVICE.")
    }
    return try makeStore(service: service, context)
  }

  /// The store of --service, else `$ODR_SERVICE`, else the bundle of the
  /// catalog `catalog` names (read from disk where it can be), as fetch,
  /// exec, env and http find it. `purpose` goes in the message when there is
  /// none (" for --key").
  func makeStore(bundleOf catalog: CatalogOptions, _ context: CommandContext, purpose: String = "") async throws -> any SecretStore {
    guard service == nil, context.variable("ODR_SERVICE") == nil else { return try makeStore(context) }
    let bundle: String
    do { bundle = try await catalog.loadFromDisk(context).catalog.bundle } catch is ConfigurationError {
      throw ValidationError("No service\(purpose): pass --service BUNDLE_ID, set ODR_SERVICE, or name a catalog (--catalog, ODR_CATALOG, odr.json) whose bundle is used.")
    }
    return try makeStore(context, defaultService: bundle)
  }
}
