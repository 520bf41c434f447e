import ArgumentParser
import ODRBase
import ODRConfiguration
import ODRKeyring
import ODRCatalog
import ODRResources

/// The options every key command shares: which service, which store, and
/// how long a keyring call may take.
struct StoreOptions: ParsableArguments {
  @Option(name: .long, help: ArgumentHelp("The bundle id the keys belong to (default: $ODR_SERVICE, else the configured catalog's bundle).", valueName: "bundle-id"))
  var service: String?

  @Option(name: .long, help: ArgumentHelp("Where keys are kept: secret-service (the desktop keyring) or kernel (the kernel keyring: no D-Bus, gone at reboot). Default: $ODR_STORE, else odr.json \"store\", else secret-service.", valueName: "store"))
  var store: KeyStoreKind?

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
    try Self.makeStore(try store ?? Self.configuredKind(context), service: service, timeout: timeout, context)
  }

  /// The store of `service` of kind `kind`, each call with a deadline of
  /// `timeout` seconds (the quick paths make theirs here too).
  static func makeStore(_ kind: KeyStoreKind, service: String, timeout: Double, _ context: CommandContext) throws -> any SecretStore {
    try KeyringInput.validate(keyService: service)
    return try privateStore(service, kind: kind, timeout: timeout, context)
  }

  /// The store of odr's own private keys (identities, signing keys) in
  /// the store of kind `kind`: with `kernel`, the kernel keyring, never the bus.
  static func privateStore(_ service: String, kind: KeyStoreKind, timeout: Double, _ context: CommandContext) throws -> any SecretStore {
    switch kind {
    case .secretService: return try context.keyring(service, deadline(seconds: timeout))
    case .kernel: return try KernelKeyringStore(service: service, stateHome: context.folders.stateHome)
    case .memory: throw ValidationError(memoryRefusal)
    }
  }

  static let memoryRefusal = "--store memory keeps keys only in the process that stores them, and every odr command is a process of its own, so it would find nothing there. Without a desktop keyring use --store kernel (the kernel keyring: no D-Bus), or `odr exec --fetch TAG -- CMD` / `odr env --fetch TAG` (keys in memory for one command). Apps use MemoryStore from the library."

  /// The store kind when --store is not given: `$ODR_STORE`, else
  /// odr.json `"store"`, else the Secret Service.
  static func configuredKind(_ context: CommandContext) throws -> KeyStoreKind {
    if let name = context.variable("ODR_STORE") { return try kind(named: name, from: "ODR_STORE") }
    if let name = try ProjectFile.store(from: context.workingDirectory, environment: context.environment) {
      return try kind(named: name, from: "odr.json \"store\"")
    }
    return .secretService
  }

  private static func kind(named name: String, from place: String) throws -> KeyStoreKind {
    guard let kind = KeyStoreKind(rawValue: name) else {
      throw ValidationError("\(place) is '\(name)'; a store is secret-service or kernel.")
    }
    return kind
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
    let configuration = try catalog.configuration(context)
    guard !configuration.locations.isEmpty else {
      // An odr.json found but not used says why: that is the surprise.
      throw ValidationError("No service\(purpose): pass --service BUNDLE_ID, set ODR_SERVICE, or name a catalog (--catalog, ODR_CATALOG, odr.json) whose bundle is used.\(configuration.inertFile.map { " \($0)" } ?? "")")
    }
    return try makeStore(context, defaultService: try await catalog.loadFromDisk(context).catalog.bundle)
  }

  /// ``makeStore(bundleOf:_:purpose:)`` for the catalog configured
  /// without options (`$ODR_CATALOG`, an adopted odr.json): `odr get`,
  /// `set`, `list` and `delete` find the same service as fetch and exec.
  func makeStoreOfConfiguredBundle(_ context: CommandContext) async throws -> any SecretStore {
    try await makeStore(bundleOf: try CatalogOptions.parse([]), context)
  }
}
