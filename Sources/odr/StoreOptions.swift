import ArgumentParser
import ODRKeyring
#if canImport(Glibc)
import Glibc
#endif

/// Which keyring backend to use.
enum StoreKind: String, ExpressibleByArgument, CaseIterable {
  case secretService = "secret-service"
  case memory
}

/// The options every key command shares: which service, which store, and
/// how long a keyring call may take.
struct StoreOptions: ParsableArguments {
  @Option(name: .long, help: ArgumentHelp("The bundle id the keys belong to (default: $ODR_SERVICE).", valueName: "bundle-id"))
  var service: String?

  @Option(name: .long, help: "Where keys are kept: secret-service (the desktop keyring) or memory (this process only).")
  var store: StoreKind = .secretService

  @Option(name: .long, help: ArgumentHelp("Seconds one keyring call may take before odr gives up (exit 9).", valueName: "seconds"))
  var timeout: Double = 5

  func validate() throws {
    guard timeout > 0, timeout <= 600 else {
      throw ValidationError("--timeout must be between 0 and 600 seconds.")
    }
    if resolvedService == nil {
      throw ValidationError("No service: pass --service BUNDLE_ID (for example --service com.example.demo) or set ODR_SERVICE.")
    }
  }

  var resolvedService: String? {
    if let service { return service }
    if let env = getenv("ODR_SERVICE"), env.pointee != 0 { return String(cString: env) }
    return nil
  }

  /// The store these options select.
  func makeStore() throws -> any SecretStore {
    let service = resolvedService ?? ""
    switch store {
    case .secretService:
      return try SecretServiceStore(service: service, deadline: .milliseconds(Int(timeout * 1000)))
    case .memory:
      try KeyringInput.validate(service: service)
      return MemoryStore(service: service)
    }
  }
}
