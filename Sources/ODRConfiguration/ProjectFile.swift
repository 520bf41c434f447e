public import FoundationEssentials
import ODRBase
#if canImport(Glibc)
import Glibc
#endif

/// `odr.json`: the project's defaults for the catalog options, found in the
/// current folder or the nearest folder above it, up to the repository's
/// root (a folder with `.git`) or `$HOME`, and read only when it is owned by
/// the user (or root) and not writable by others. Its `catalog`, `trust`,
/// `auth` and `endpoint` count only once adopted (``ProjectAdoption``).
/// Read strictly: a
/// syntax error, an unknown or misspelt key, or a value of the wrong type is
/// a ``ConfigurationError`` (exit 2 in `odr`) naming the file, line and
/// column.
public struct ProjectFile: Decodable, Sendable {
  /// The bundle the file speaks for: a catalog of another bundle through it
  /// is refused (nil: the bundle its catalog location is bound to).
  public let bundle: String?
  /// One catalog location, or several (mirrors, tried in order).
  public let catalog: [String]?
  /// The store budget, as --max-size takes it ("500M").
  public let maxSize: String?
  /// Publisher signing keys to trust, as --trust takes them.
  public let trust: [String]?
  /// An S3-compatible endpoint for s3:// catalogs (path-style).
  public let endpoint: String?
  /// A keyring item sent as a header to http(s) catalogs.
  public let auth: Auth?
  /// Where keys are kept, as --store takes it (`secret-service`, `kernel`).
  public let store: String?

  /// A keyring item sent as a header to the catalog's origin.
  public struct Auth: Decodable, Sendable {
    /// The header (default `Authorization`).
    public let header: String?
    /// Put before the value (default `Bearer` for `Authorization`).
    public let scheme: String?
    /// The item's key name.
    public let key: String
    /// The item's service.
    public let service: String
  }

  /// The largest odr.json read.
  static let maxBytes = 1 << 20
  static let keys = ["bundle", "catalog", "maxSize", "trust", "endpoint", "auth", "store"]
  static let expectedTypes = ["catalog": "a string or a list of strings", "trust": "a list of strings", "auth": "an object with \"key\" and \"service\""]
  static let authKeys = ["header", "scheme", "key", "service"]

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    // a string, else a list: decoding the list reports the error
    if let one = dropping(.isTheAnswer, { try container.decodeIfPresent(String.self, forKey: .catalog) }) {
      catalog = [one]
    } else {
      catalog = try container.decodeIfPresent([String].self, forKey: .catalog)
    }
    bundle = try container.decodeIfPresent(String.self, forKey: .bundle)
    maxSize = try container.decodeIfPresent(String.self, forKey: .maxSize)
    trust = try container.decodeIfPresent([String].self, forKey: .trust)
    endpoint = try container.decodeIfPresent(String.self, forKey: .endpoint)
    auth = try container.decodeIfPresent(Auth.self, forKey: .auth)
    store = try container.decodeIfPresent(String.self, forKey: .store)
  }

  enum CodingKeys: String, CodingKey { case bundle, catalog, maxSize, trust, endpoint, auth, store }

  /// The `"store"` of the odr.json that counts from `folder` (one that is
  /// the user's and only theirs; it needs no adoption: it picks where this
  /// machine keeps keys, not what it trusts or where it sends them); nil
  /// when there is none.
  public static func store(from folder: URL, environment: [String: String]) throws -> String? {
    guard let found = locate(from: folder, home: environment["HOME"].map { URL(filePath: $0) }), ownershipProblem(of: found) == nil
    else { return nil }
    return try read(found).store
  }

  /// The odr.json at `file`, read.
  public static func read(_ file: URL) throws -> ProjectFile {
    try parse(try bytes(of: file), file: file.path)
  }

  /// The bytes of the odr.json at `file`.
  public static func bytes(of file: URL) throws -> [UInt8] {
    do { return Array(try Data(contentsOf: file)) } catch {
      throw ConfigurationError("\(file.path): cannot be read (\(error)).")
    }
  }

  /// odr.json in `folder` or above, stopping at a repository root (a folder
  /// with `.git`) or at `home`, whichever comes first.
  public static func locate(from folder: URL, home: URL?) -> URL? {
    var folder = folder.standardizedFileURL
    let home = home?.standardizedFileURL.path
    while true {
      let candidate = folder.appending(path: "odr.json")
      if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
      let parent = folder.deletingLastPathComponent()
      if FileManager.default.fileExists(atPath: folder.appending(path: ".git").path) || folder.path == home || parent.path == folder.path { return nil }
      folder = parent
    }
  }

  /// The folder whose odr.json a CI job (`CI=true`) adopts without asking:
  /// the job's own checkout — `$GITHUB_WORKSPACE`, else `$CI_PROJECT_DIR`,
  /// else the outermost repository (a folder with `.git`) holding
  /// `folder`. A repository cloned inside the workspace (a dependency, a
  /// submodule, a fork under test) is never it; nil when `folder` is in no
  /// repository at all.
  public static func checkoutRoot(environment: [String: String], from folder: URL) -> URL? {
    for name in ["GITHUB_WORKSPACE", "CI_PROJECT_DIR"] {
      if let path = environment[name], !path.isEmpty { return URL(filePath: path, directoryHint: .isDirectory).resolvingSymlinksInPath() }
    }
    var folder = folder.resolvingSymlinksInPath()
    var outermost: URL?
    while true {
      if FileManager.default.fileExists(atPath: folder.appending(path: ".git").path) { outermost = folder }
      let parent = folder.deletingLastPathComponent()
      if parent.path == folder.path { return outermost }
      folder = parent
    }
  }

  /// Why the odr.json at `file` must not be read (owned by another user,
  /// or writable by others: anyone could write what odr would follow, as
  /// git's `safe.directory`), or nil when it may.
  public static func ownershipProblem(of file: URL) -> String? {
    var info = stat()
    guard stat(file.path, &info) == 0 else { return "it cannot be examined (\(String(cString: strerror(errno))))" }
    if info.st_uid != geteuid() && info.st_uid != 0 { return "it belongs to another user (uid \(info.st_uid))" }
    if info.st_mode & 0o022 != 0 { return "others may write to it (mode \(String(info.st_mode & 0o777, radix: 8)))" }
    return nil
  }

  /// `bytes` as an odr.json, or the usage error that says what is wrong where.
  public static func parse(_ bytes: [UInt8], file: String) throws -> ProjectFile {
    func place(_ offset: Int) -> String {
      let (line, column) = JSONReader.position(of: offset, in: bytes)
      return "\(file):\(line):\(column)"
    }
    let found: [JSONReader.Key]
    do { found = try JSONReader.keys(of: bytes, limit: maxBytes) } catch {
      throw ConfigurationError("\(place(error.offset)): \(error.message)\(error.kind == .syntax ? ". odr.json is JSON: {\"catalog\": \"…\", \"maxSize\": \"500M\"}" : "").")
    }
    guard bytes.first(where: { ![0x20, 0x09, 0x0a, 0x0d].contains($0) }) == UInt8(ascii: "{") else {
      throw ConfigurationError("\(file): odr.json holds one JSON object, such as {\"catalog\": \"…\"}.")
    }
    for key in found where key.path.isEmpty || key.path == ["auth"] {
      let known = key.path.isEmpty ? keys : authKeys
      guard !known.contains(key.name) else { continue }
      let guess = NameSuggestion.closest(to: key.name, among: known).map { " Did you mean \"\($0)\"?" } ?? ""
      throw ConfigurationError("\(place(key.offset)): unknown key \"\(key.name.prefix(40))\"\(key.path.isEmpty ? "" : " in \"auth\"").\(guess) Known keys: \(known.joined(separator: ", ")).")
    }
    do {
      return try JSONDecoder().decode(ProjectFile.self, from: Data(bytes))
    } catch let error as DecodingError {
      let (path, what): ([String], String) = switch error {
      case .typeMismatch(_, let context):
        (context.codingPath.map(\.stringValue), "should be " + (expectedTypes[context.codingPath.first?.stringValue ?? ""] ?? "a string"))
      case .valueNotFound(_, let context): (context.codingPath.map(\.stringValue), "is missing a value")
      case .keyNotFound(let key, let context): (context.codingPath.map(\.stringValue), "needs the key \"\(key.stringValue)\"")
      default: ([], "is not what odr.json holds")
      }
      let named = path.filter { Int($0) == nil }
      let offset = found.last { $0.path + [$0.name] == Array(named.suffix(named.count)) }?.offset
      throw ConfigurationError("\(offset.map(place) ?? file): \"\(named.joined(separator: "."))\" \(what).")
    }
  }
}
