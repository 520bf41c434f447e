import ArgumentParser
import FoundationEssentials
import ODRResources
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

  /// The project file read when neither the flag nor the variable is set.
  struct ProjectConfig: Decodable { let catalog: String? }

  /// Checks an explicit --catalog early; a missing catalog is reported
  /// when a command needs one (`odr exec` and `odr env` may not).
  func validate() throws {
    if catalog != nil { _ = try location() }
  }

  /// The catalog location, resolved and checked.
  func location() throws -> URL {
    var resolved = catalog ?? Self.environmentCatalog
    if resolved == nil { resolved = try Self.projectCatalog() }
    guard let text = resolved else {
      throw ValidationError("No catalog: pass --catalog URL, set ODR_CATALOG, or add {\"catalog\": \"…\"} to odr.json here.")
    }
    if text.hasPrefix("http://") || text.hasPrefix("https://") {
      guard let url = URL(string: text), url.host != nil else { throw ValidationError("'\(text)' is not a valid URL.") }
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
    if offline { return try ResourceCatalog.loadOffline(from: url) }
    guard !url.isFileURL else { return try await ResourceCatalog.load(from: url) }
    guard let network = ODR.network else { NetworkHandoff.exec() }
    return try await ResourceCatalog.load(from: url, transport: network.transport())
  }

  private static var environmentCatalog: String? {
    guard let value = getenv("ODR_CATALOG"), value.pointee != 0 else { return nil }
    return String(cString: value)
  }

  private static func projectCatalog() throws -> String? {
    guard let data = try? Data(contentsOf: URL(filePath: "odr.json")) else { return nil }
    do { return try JSONDecoder().decode(ProjectConfig.self, from: data).catalog } catch {
      throw ValidationError("odr.json in this directory is not valid JSON of the form {\"catalog\": \"…\"}.")
    }
  }
}
