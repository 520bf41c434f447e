import ArgumentParser
import FoundationEssentials
import ODRBase
import ODRConfiguration
import ODRHTTP
import ODRKeyring
import ODRResources
import ODRTransports

/// Where the catalog is: `--catalog` (repeatable: mirrors), else
/// `$ODR_CATALOG` (comma-separated), else the `catalog` field of `odr.json`
/// in the current directory (a string or a list).
struct CatalogOptions: ParsableArguments {
  @Option(help: ArgumentHelp("The catalog: a folder made by `odr pack`, its catalog.json, a file://, http(s):// or s3://bucket/prefix URL; repeat it for mirrors, tried in order (default: $ODR_CATALOG, comma-separated, then odr.json).", valueName: "url"), completion: .directory)
  var catalog: [String] = []

  @Flag(help: "Never touch the network: use the catalog and files already on disk.")
  var offline = false

  @Option(name: .customLong("trust"), help: ArgumentHelp("A publisher's signing key (ed25519:… or ed25519-mldsa65:…) to trust; repeatable (default: $ODR_TRUST, comma-separated, then \"trust\" in odr.json; with none, the first signed catalog's key is trusted on first use).", valueName: "key"))
  var trustedKeys: [String] = []

  @Flag(name: .customLong("trust-on-first-use"), help: "With CI=true and no key pinned, trust the first signed catalog's key anyway (CI otherwise refuses: a runner keeps no state, so every run would be a first use).")
  var trustOnFirstUse = false

  @Option(name: .customLong("max-size"), help: ArgumentHelp("The most the local store may hold, e.g. 500M or 2G (default: $ODR_MAX_SIZE, then \"maxSize\" in odr.json, else no limit).", valueName: "size"))
  var maxSize: String?

  @Option(name: .customLong("network-timeout"), help: ArgumentHelp("Seconds a download may stall without a byte before it fails (default 15; connecting may take 5).", valueName: "seconds"))
  var networkTimeout: Double?

  /// The configuration these flags, the environment and odr.json make
  /// (flags first); a broken one is a ConfigurationError (exit 2).
  /// `keyringTimeout`: seconds each keyring call of a catalog token may take.
  func configuration(_ context: CommandContext, keyringTimeout: Double = StoreOptions.defaultTimeout) throws -> ODRConfiguration {
    var configuration = try Self.discover(context, overrides, keyringTimeout: keyringTimeout)
    configuration.stall = .milliseconds(Int((networkTimeout ?? 15) * 1000))
    return configuration
  }

  /// The configuration of `context`'s environment, folder, clock and
  /// keyring (its catalog token).
  static func discover(_ context: CommandContext, _ overrides: ODRConfiguration.Overrides = .init(),
                       keyringTimeout: Double = StoreOptions.defaultTimeout) throws -> ODRConfiguration {
    var configuration = try ODRConfiguration.discover(overrides, environment: context.environment, folder: context.workingDirectory, now: context.now)
    configuration.catalogTokens = KeyringCatalogTokens(keyring: context.keyring, deadline: StoreOptions.deadline(seconds: keyringTimeout))
    return configuration
  }

  private var overrides: ODRConfiguration.Overrides {
    .init(catalog: catalog, trust: trustedKeys, maxSize: maxSize, trustOnFirstUse: trustOnFirstUse)
  }

  /// Checks the flags; the configuration they make with the environment
  /// and odr.json is checked when a command runs (a missing catalog is
  /// reported only when a command needs one: `odr exec` and `odr env` may not).
  func validate() throws {
    do { try ODRConfiguration.check(overrides) } catch let error as ConfigurationError { throw ValidationError(error.message) }
    if let networkTimeout, !(0.1...3600).contains(networkTimeout) {
      throw ValidationError("--network-timeout is a number of seconds between 0.1 and 3600.")
    }
  }

  /// Loads the catalog for a command that may download: revalidates the
  /// kept catalog (or falls back to it when the source is unreachable), and
  /// opens its store. http(s) and s3 go over odr's HTTP client (ODRHTTP).
  func load(_ context: CommandContext, keyringTimeout: Double = StoreOptions.defaultTimeout) async throws -> ResourceCatalog {
    let configuration = try configuration(context, keyringTimeout: keyringTimeout)
    let urls = try configuration.requireLocations()
    var resources: ResourceCatalog
    if offline {
      resources = try ResourceCatalog.loadOffline(from: urls[0], cacheHome: configuration.folders.cacheHome, trust: configuration.trust)
    } else {
      let transport = try await Self.transport(configuration, context)
      resources = try await ResourceCatalog.load(from: urls[0], cacheHome: configuration.folders.cacheHome, transport: transport, trust: configuration.trust)
    }
    resources.budget = configuration.maxSize
    for notice in resources.notices { context.output.error(notice) }
    return resources
  }

  /// Loads the catalog for a command answered from disk (`end`, `path`,
  /// `status`, …): for a network source, the catalog kept from the last
  /// online load, with no request at all; only when none is kept, as
  /// ``load(_:)`` does. A local folder is simply read again (it costs no wait).
  func loadFromDisk(_ context: CommandContext) async throws -> ResourceCatalog {
    let configuration = try configuration(context)
    let urls = try configuration.requireLocations()
    // no usable kept copy: load from the source, which reports what is wrong
    guard !offline, !urls.allSatisfy(\.isFileURL), var resources = dropping(.isTheAnswer, { try ResourceCatalog.loadKept(from: urls[0], cacheHome: configuration.folders.cacheHome, trust: configuration.trust) }) else {
      return try await load(context)
    }
    resources.budget = configuration.maxSize
    for notice in resources.notices { context.output.error(notice) }
    return resources
  }

  /// Where a publishing command's CATALOG argument points: a URL read over
  /// the network (http(s)://, s3://), or a folder (a path or file://).
  enum Place {
    case remote(URL)
    case folder(URL)

    init(_ text: String, _ context: CommandContext) throws {
      if text.hasPrefix("http://") || text.hasPrefix("https://") || text.hasPrefix("s3://") {
        guard let url = URL(string: text), url.host?.isEmpty == false, url.user == nil, url.password == nil else {
          throw ValidationError("'\(text.prefix(200))' is not a catalog URL (http(s)://host/path/ or s3://bucket/prefix, without credentials).")
        }
        self = .remote(url)
      } else {
        guard !text.contains("://") || text.hasPrefix("file://") else {
          throw ValidationError("Unsupported catalog '\(text.prefix(200))'; use a folder, file://, http(s):// or s3://.")
        }
        self = .folder(text.hasPrefix("file://") ? URL(string: text) ?? URL(filePath: text) : context.url(text))
      }
    }
  }

  /// The transport of one network location outside the catalog options
  /// (`odr verify URL`, `odr publish --check`), with odr.json's S3 endpoint
  /// and catalog token as clients use them.
  static func transport(for url: URL, stall: Double?, _ context: CommandContext) async throws -> any BlobTransport {
    var configuration = try discover(context)
    configuration.stall = .milliseconds(Int((stall ?? 15) * 1000))
    return HTTPTransport(try await configuration.networkLocation(url))
  }

  /// How `configuration`'s locations are read from `odr`: odr's HTTP client
  /// for the network, mirrors reported on stderr.
  static func transport(_ configuration: ODRConfiguration, _ context: CommandContext) async throws -> any BlobTransport {
    let output = context.output
    return try await MirrorTransport.reading(try configuration.requireLocations(), notice: { output.error($0) }) {
      HTTPTransport(try await configuration.networkLocation($0))
    }
  }
}
