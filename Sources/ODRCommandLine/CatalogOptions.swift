import ArgumentParser
import FoundationEssentials
import ODRKeyring
import ODRResources
import ODRTrust
#if canImport(Glibc)
import Glibc
#endif

/// Where the catalog is: `--catalog` (repeatable: mirrors), else
/// `$ODR_CATALOG` (comma-separated), else the `catalog` field of `odr.json`
/// in the current directory (a string or a list).
struct CatalogOptions: ParsableArguments {
  @Option(help: ArgumentHelp("The catalog: a folder made by `odr pack`, its catalog.json, a file://, http(s):// or s3://bucket/prefix URL; repeat it for mirrors, tried in order (default: $ODR_CATALOG, comma-separated, then odr.json).", valueName: "url"))
  var catalog: [String] = []

  @Flag(help: "Never touch the network: use the catalog and files already on disk.")
  var offline = false

  @Option(name: .customLong("trust"), help: ArgumentHelp("A publisher's signing key (ed25519:…) to trust; repeatable (default: $ODR_TRUST, comma-separated, then \"trust\" in odr.json; with none, the first signed catalog's key is trusted on first use).", valueName: "key"))
  var trustedKeys: [String] = []

  @Flag(name: .customLong("trust-on-first-use"), help: "With CI=true and no key pinned, trust the first signed catalog's key anyway (CI otherwise refuses: a runner keeps no state, so every run would be a first use).")
  var trustOnFirstUse = false

  @Option(name: .customLong("max-size"), help: ArgumentHelp("The most the local store may hold, e.g. 500M or 2G (default: $ODR_MAX_SIZE, then \"maxSize\" in odr.json, else no limit).", valueName: "size"))
  var maxSize: String?

  @Option(name: .customLong("network-timeout"), help: ArgumentHelp("Seconds a download may stall without a byte before it fails (default 15; connecting may take 5).", valueName: "seconds"))
  var networkTimeout: Double?

  /// The store budget in bytes, from --max-size or $ODR_MAX_SIZE.
  func budget() throws -> Int64? {
    let configured = try Self.projectConfig()?.maxSize
    guard let text = maxSize ?? getenv("ODR_MAX_SIZE").map({ String(cString: $0) }) ?? configured, !text.isEmpty else { return nil }
    guard !ByteSize.exceedsMaximum(text) else {
      throw ValidationError("'\(text.prefix(40))' is larger than any store can be; the largest budget is 1024P (2^60 bytes).")
    }
    guard let bytes = ByteSize.parse(text) else {
      throw ValidationError("'\(text.prefix(40))' is not a size: write a number and a unit, such as 500M, 1.5G, 1GB or 10MiB (K, M, G, T and KiB… are powers of 1024; KB, MB… of 1000), at most 1024P.")
    }
    return bytes
  }

  /// The trust policy: keys pinned by --trust, else $ODR_TRUST, else
  /// odr.json. With CI=true and nothing pinned, no trust on first use
  /// unless --trust-on-first-use.
  func trustPolicy() throws -> TrustPolicy {
    var texts = trustedKeys
    var from = "--trust"
    if texts.isEmpty, let env = getenv("ODR_TRUST") {
      guard env.pointee != 0 else {
        throw ValidationError("ODR_TRUST is set but empty (a secret this job cannot see? forks' pull requests get no secrets). Set it to the publisher's key (ed25519:…), or unset it.")
      }
      texts = String(cString: env).split(separator: ",").map(String.init)
      from = "ODR_TRUST"
    }
    if texts.isEmpty {
      texts = try Self.projectConfig()?.trust ?? []
      from = "odr.json \"trust\""
    }
    let keys = try texts.map { text in
      do { return try VerifyingKey(text) } catch let error as TrustError { throw ValidationError("\(from): \(error.message)") }
    }
    var policy = TrustPolicy(pinned: keys)
    policy.allowsFirstUse = trustOnFirstUse || getenv("CI").map { String(cString: $0).lowercased() } != "true"
    return policy
  }

  /// Checks an explicit --catalog early; a missing catalog is reported
  /// when a command needs one (`odr exec` and `odr env` may not).
  func validate() throws {
    if !catalog.isEmpty { _ = try locations() }
    _ = try budget()
    _ = try trustPolicy()
    if let networkTimeout, !(0.1...3600).contains(networkTimeout) {
      throw ValidationError("--network-timeout is a number of seconds between 0.1 and 3600.")
    }
  }

  /// The catalog's locations (more than one: mirrors), resolved and checked.
  func locations() throws -> [URL] {
    var texts = catalog
    if texts.isEmpty, let value = getenv("ODR_CATALOG"), value.pointee != 0 {
      texts = String(cString: value).split(separator: ",").map(String.init).filter { !$0.isEmpty }
    }
    if texts.isEmpty { texts = try Self.projectConfig()?.catalog ?? [] }
    guard !texts.isEmpty else {
      throw ValidationError("No catalog: pass --catalog URL, set ODR_CATALOG, or add {\"catalog\": \"…\"} to an odr.json (here or in a folder above, up to the repository's root).")
    }
    return try texts.map(Self.location)
  }

  private static func location(_ text: String) throws -> URL {
    if text.hasPrefix("http://") || text.hasPrefix("https://") || text.hasPrefix("s3://") {
      guard let url = URL(string: text), url.host != nil, !(url.host ?? "").isEmpty else { throw ValidationError("'\(text.prefix(200))' is not a valid URL.") }
      guard url.user == nil && url.password == nil else {
        throw ValidationError("The catalog URL carries a user name or password; odr never takes credentials from a URL (they would show in process lists, logs and odr's files). Use \"auth\" in odr.json (a keyring item), or AWS credentials for s3://.")
      }
      return url
    }
    if text.hasPrefix("file://") {
      guard let url = URL(string: text), url.isFileURL else { throw ValidationError("'\(text)' is not a valid file:// URL.") }
      return url
    }
    guard !text.contains("://") else { throw ValidationError("Unsupported catalog URL '\(text.prefix(200))'; use a folder, file://, http(s):// or s3://.") }
    return URL(filePath: text)
  }

  /// Loads the catalog for a command that may download: revalidates the
  /// kept catalog (or falls back to it when the source is unreachable), and
  /// opens its store.
  func load(_ context: CommandContext) async throws -> ResourceCatalog {
    let urls = try locations()
    var resources: ResourceCatalog
    if offline {
      resources = try ResourceCatalog.loadOffline(from: urls[0], trust: try trustPolicy())
    } else {
      resources = try await ResourceCatalog.load(from: urls[0], transport: try await transport(for: urls, context), trust: try trustPolicy())
    }
    resources.budget = try budget()
    for notice in resources.notices { Output.error(notice) }
    return resources
  }

  /// Loads the catalog for a command answered from disk (`end`, `path`,
  /// `status`, …): for a network source, the catalog kept from the last
  /// online load, with no request at all; only when none is kept, as
  /// ``load()`` does. A local folder is simply read again (it costs no wait).
  func loadFromDisk(_ context: CommandContext) async throws -> ResourceCatalog {
    let urls = try locations()
    guard !offline, !urls.allSatisfy(\.isFileURL), var resources = try? ResourceCatalog.loadKept(from: urls[0], trust: try trustPolicy()) else {
      return try await load(context)
    }
    resources.budget = try budget()
    for notice in resources.notices { Output.error(notice) }
    return resources
  }

  /// How each location is read: files here; http(s) and s3 over
  /// AsyncHTTPClient; several locations as mirrors.
  private func transport(for urls: [URL], _ context: CommandContext) async throws -> any BlobTransport {
    var transports: [any BlobTransport] = []
    for url in urls {
      guard !url.isFileURL else {
        transports.append(FileTransport())
        continue
      }
      transports.append(try await Self.networkSource(url, stall: networkTimeout ?? 15).transport())
    }
    guard urls.count > 1 else { return transports[0] }
    let mirrors = zip(urls, transports).map { url, transport in
      let catalogURL = url.pathExtension == "json" ? url : url.appending(path: "catalog.json")
      return MirrorTransport.Mirror(folder: catalogURL.deletingLastPathComponent(), transport: transport)
    }
    return MirrorTransport(mirrors) { Output.error($0) }
  }

  /// How to reach `url`: odr.json's S3 endpoint and catalog token.
  static func networkSource(_ url: URL, stall: Double) async throws -> NetworkSource {
    let config = try projectConfig()
    var source = NetworkSource(url: url, stall: stall, endpoint: config?.endpoint)
    if let auth = config?.auth, url.scheme == "http" || url.scheme == "https" {
      source.credential = try await CatalogAuth.credential(auth, for: url, deadline: .seconds(5))
    }
    return source
  }

  /// odr.json, or nil when there is none; a broken one is a usage error.
  /// Found and read once per process: budget, trust, locations and sources
  /// all ask for it.
  static func projectConfig() throws -> ProjectConfig? { try loadedProjectConfig.get() }

  private static let loadedProjectConfig = Result { try ProjectConfig.load() }
}
