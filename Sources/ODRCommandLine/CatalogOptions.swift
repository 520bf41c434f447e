import ArgumentParser
import FoundationEssentials
import ODRResources
import ODRTrust
#if canImport(Glibc)
import Glibc
#endif

/// Where the catalog is: `--catalog`, else `$ODR_CATALOG`, else the
/// `catalog` field of `odr.json` in the current directory.
struct CatalogOptions: ParsableArguments {
  @Option(help: ArgumentHelp("The catalog: a folder made by `odr pack`, its catalog.json, or a file:// URL (default: $ODR_CATALOG, then odr.json).", valueName: "url"))
  var catalog: String?

  @Flag(help: "Never touch the network: use the catalog and files already on disk.")
  var offline = false

  @Option(name: .customLong("trust"), help: ArgumentHelp("A publisher's signing key (ed25519:…) to trust; repeatable (default: $ODR_TRUST, comma-separated, then \"trust\" in odr.json; with none, the first signed catalog's key is trusted on first use).", valueName: "key"))
  var trustedKeys: [String] = []

  @Option(name: .customLong("max-size"), help: ArgumentHelp("The most the local store may hold, e.g. 500M or 2G (default: $ODR_MAX_SIZE, then \"maxSize\" in odr.json, else no limit).", valueName: "size"))
  var maxSize: String?

  /// The store budget in bytes, from --max-size or $ODR_MAX_SIZE.
  func budget() throws -> Int64? {
    guard let text = maxSize ?? getenv("ODR_MAX_SIZE").map({ String(cString: $0) }) ?? Self.projectConfig()?.maxSize,
          !text.isEmpty else { return nil }
    let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
    let unit = text.last.flatMap { units[Character($0.uppercased())] }
    guard let number = Int64(unit == nil ? text : String(text.dropLast())), number >= 0 else {
      throw ValidationError("'\(text.prefix(40))' is not a size: use bytes or a number with K, M, G or T, for example 500M.")
    }
    let (bytes, overflow) = number.multipliedReportingOverflow(by: unit ?? 1)
    guard !overflow, bytes <= 1 << 60 else {
      throw ValidationError("'\(text.prefix(40))' is larger than any store can be; the largest budget is 1024P (2^60 bytes).")
    }
    return bytes
  }

  /// The project file read when neither the flag nor the variable is set.
  struct ProjectConfig: Decodable {
    let catalog: String?
    /// The store budget, as --max-size takes it ("500M").
    let maxSize: String?
    /// Publisher signing keys to trust, as --trust takes them.
    let trust: [String]?
  }

  /// The trust policy: keys pinned by --trust, else $ODR_TRUST, else odr.json.
  func trustPolicy() throws -> TrustPolicy {
    var texts = trustedKeys
    if texts.isEmpty, let env = getenv("ODR_TRUST"), env.pointee != 0 {
      texts = String(cString: env).split(separator: ",").map(String.init)
    }
    if texts.isEmpty { texts = Self.projectConfig()?.trust ?? [] }
    let keys = try texts.map { text in
      do { return try VerifyingKey(text) } catch let error as TrustError { throw ValidationError(error.message) }
    }
    return TrustPolicy(pinned: keys)
  }

  /// Checks an explicit --catalog early; a missing catalog is reported
  /// when a command needs one (`odr exec` and `odr env` may not).
  func validate() throws {
    if catalog != nil { _ = try location() }
    _ = try budget()
    _ = try trustPolicy()
  }

  /// The catalog location, resolved and checked.
  func location() throws -> URL {
    var resolved = catalog ?? Self.environmentCatalog
    if resolved == nil { resolved = try Self.projectCatalog() }
    guard let text = resolved else {
      throw ValidationError("No catalog: pass --catalog URL, set ODR_CATALOG, or add {\"catalog\": \"…\"} to odr.json here.")
    }
    if text.hasPrefix("http://") || text.hasPrefix("https://") {
      guard let url = URL(string: text), url.host != nil else { throw ValidationError("The catalog URL is not a valid URL.") }
      guard url.user == nil && url.password == nil else {
        throw ValidationError("The catalog URL carries a user name or password; odr never takes credentials from a URL (they would show in process lists, logs and odr's files). Remove them: a signed catalog with encrypted secrets packs can be served from a public host.")
      }
      return url
    }
    if text.hasPrefix("file://") {
      guard let url = URL(string: text), url.isFileURL else { throw ValidationError("'\(text)' is not a valid file:// URL.") }
      return url
    }
    guard !text.contains("://") else { throw ValidationError("Unsupported catalog URL '\(text)'; use a folder or a file:// URL.") }
    return URL(filePath: text)
  }

  /// Loads the catalog and opens its store. An http(s) catalog needs the
  /// network transport; the lean `odr` re-runs the command as `odr-net`.
  func load() async throws -> ResourceCatalog {
    let url = try location()
    var resources: ResourceCatalog
    if offline {
      resources = try ResourceCatalog.loadOffline(from: url)
    } else if url.isFileURL {
      resources = try await ResourceCatalog.load(from: url, trust: try trustPolicy())
    } else {
      guard let network = ODR.network else { NetworkHandoff.exec() }
      resources = try await ResourceCatalog.load(from: url, transport: network.transport(), trust: try trustPolicy())
    }
    resources.budget = try budget()
    for notice in resources.notices { Output.error(notice) }
    return resources
  }

  private static var environmentCatalog: String? {
    guard let value = getenv("ODR_CATALOG"), value.pointee != 0 else { return nil }
    return String(cString: value)
  }

  private static func projectCatalog() throws -> String? {
    guard FileManager.default.fileExists(atPath: "odr.json") else { return nil }
    guard let config = projectConfig() else {
      throw ValidationError("odr.json in this directory is not valid JSON of the form {\"catalog\": \"…\", \"maxSize\": \"500M\"}.")
    }
    return config.catalog
  }

  /// `odr.json` in the current directory, if there is a readable one.
  private static func projectConfig() -> ProjectConfig? {
    guard let data = try? Data(contentsOf: URL(filePath: "odr.json")) else { return nil }
    return try? JSONDecoder().decode(ProjectConfig.self, from: data)
  }

}
