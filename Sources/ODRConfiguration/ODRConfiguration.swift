public import FoundationEssentials
public import ODRBase
import ODRCatalog
public import ODRTransports
import ODRSigning
public import ODRTrust

/// Where a client's catalog is and what it trusts: the one reading of
/// odr.json and the `ODR_*` variables that `odr` and apps share, so an app
/// admits exactly what `odr fetch` admits on the same machine.
///
/// Each setting comes from the first of: what the caller gives
/// (``Overrides``, `odr`'s flags), the environment (`ODR_CATALOG`,
/// `ODR_TRUST`, `ODR_MAX_SIZE`, `CI`), the nearest odr.json — whose
/// `catalog`, `trust`, `auth` and `endpoint` count only once the user
/// adopted it (`odr trust adopt`; with `CI=true`, the job's own checkout).
/// The library never adopts.
///
/// It only reads: loading the catalog it names (`loadCatalog`,
/// `transport(network:)`) is ODRKit's, which wires the resources to it.
public struct ODRConfiguration: Sendable {
  /// Values that win over the environment and odr.json (`odr`'s flags).
  public struct Overrides: Sendable {
    /// Catalog locations (`--catalog`).
    public var catalog: [String] = []
    /// Pinned keys (`--trust`).
    public var trust: [String] = []
    /// The store budget (`--max-size`).
    public var maxSize: String?
    /// Trust on first use even with `CI=true` (`--trust-on-first-use`).
    public var trustOnFirstUse = false

    public init(catalog: [String] = [], trust: [String] = [], maxSize: String? = nil, trustOnFirstUse: Bool = false) {
      self.catalog = catalog
      self.trust = trust
      self.maxSize = maxSize
      self.trustOnFirstUse = trustOnFirstUse
    }
  }

  /// The catalog's locations, in order (more than one: mirrors). Empty
  /// when none is configured; ``requireLocations()`` says what to do.
  public var locations: [URL]
  /// What is trusted to sign the catalog.
  public var trust: TrustPolicy
  /// The most the local store may hold, in bytes; nil: no limit.
  public var maxSize: Int64?
  /// The S3-compatible endpoint for s3:// catalogs (odr.json `"endpoint"`).
  public var endpoint: String?
  /// The catalog token sent to http(s) catalogs (odr.json `"auth"`).
  public var auth: ProjectFile.Auth?
  /// How long a transfer may go without a byte.
  public var stall: Duration = .seconds(15)
  /// Where `auth`'s catalog token is read (nil: a catalog with `auth` is
  /// refused with a ConfigurationError). `odr` sets its command's keyring;
  /// ODRKit's provider, the Secret Service unless the app set one.
  public var catalogTokens: (any CatalogTokenSource)?
  /// The environment S3 credentials are read from.
  public var environment: [String: String]
  /// The odr.json these settings were read from, if any.
  public var file: URL?
  /// Why an odr.json that was found is not used (not adopted, changed
  /// since, or not the user's), for messages; nil when none was found or
  /// it is used.
  public var inertFile: String?
  /// The XDG folders of ``environment``: the store's cache, the trust state.
  public var folders: XDGFolders { XDGFolders(environment: environment) }

  /// Reads `overrides`, `environment` and the odr.json nearest `folder`
  /// (up to the repository's root or `$HOME`). Throws
  /// ``ConfigurationError`` for a broken odr.json or variable; a missing
  /// catalog is not an error here.
  /// `now` is the clock of the trust policy (expiry) and of the stores
  /// catalogs open (uses, leases).
  public static func discover(_ overrides: Overrides = Overrides(), environment: [String: String] = ProcessInfo.processInfo.environment,
                              folder: URL, now: @escaping @Sendable () -> Date = { Date() }) throws -> ODRConfiguration {
    let folders = XDGFolders(environment: environment)
    var project: ProjectFile?, adopted: ProjectFile?, file: URL?, inert: String?
    if let found = ProjectFile.locate(from: folder, home: environment["HOME"].map { URL(filePath: $0) }) {
      if let problem = ProjectFile.ownershipProblem(of: found) {
        inert = "\(found.path) is ignored: \(problem). odr reads an odr.json only when it is yours and only you may change it."
      } else {
        let bytes = try ProjectFile.bytes(of: found)
        project = try ProjectFile.parse(bytes, file: found.path)
        file = found
        let status = try ProjectAdoption(stateHome: folders.stateHome).status(of: found.path, bytes: bytes)
        if environment["CI"]?.lowercased() == "true", status != .adopted {
          // A CI job adopts its own checkout's odr.json, and no other.
          let root = ProjectFile.checkoutRoot(environment: environment, from: folder)
          if root?.path == found.deletingLastPathComponent().resolvingSymlinksInPath().path {
            adopted = project
          } else {
            inert = "\(found.path) is not adopted: with CI=true only the job's own checkout's odr.json counts (\(root.map { "\($0.path)/odr.json" } ?? "none: no $GITHUB_WORKSPACE, $CI_PROJECT_DIR or repository here")); a repository cloned inside it must not choose what odr trusts. Run odr from the checkout, or adopt this one with `odr trust adopt` in a step of its own."
          }
        } else if status == .adopted {
          adopted = project
        } else {
          inert = "\(found.path) is not adopted\(status == .changed ? " in its current form (it changed since)" : ""): its catalog, trust, auth and endpoint count only once you run `odr trust adopt` in its folder (a cloned repository must not choose what odr trusts)."
        }
      }
    }
    var configuration = ODRConfiguration(
      locations: try locations(overrides.catalog, environment: environment, project: adopted, base: folder),
      trust: try trust(overrides, environment: environment, project: adopted, file: file, now: now),
      maxSize: try budget(overrides.maxSize ?? environment["ODR_MAX_SIZE"] ?? project?.maxSize),
      endpoint: adopted?.endpoint, auth: adopted?.auth, environment: environment, file: file)
    configuration.inertFile = inert
    return configuration
  }

  /// Checks the values `overrides` give (flags), before any environment
  /// or odr.json is read: the errors ``discover(_:environment:folder:now:)``
  /// would throw for them.
  public static func check(_ overrides: Overrides) throws {
    _ = try overrides.catalog.map { try location($0) }
    _ = try budget(overrides.maxSize)
    for text in overrides.trust {
      do { _ = try VerifyingKey(text) } catch let error as TrustError { throw ConfigurationError("--trust: \(error.message)") }
    }
  }

  public init(locations: [URL], trust: TrustPolicy = TrustPolicy(), maxSize: Int64? = nil, endpoint: String? = nil,
              auth: ProjectFile.Auth? = nil, environment: [String: String] = ProcessInfo.processInfo.environment, file: URL? = nil) {
    self.locations = locations
    self.trust = trust
    self.maxSize = maxSize
    self.endpoint = endpoint
    self.auth = auth
    self.environment = environment
    self.file = file
  }

  /// ``locations``, or the error that says how to name a catalog.
  public func requireLocations() throws -> [URL] {
    guard !locations.isEmpty else {
      if let inertFile { throw ConfigurationError("No catalog: \(inertFile)") }
      throw ConfigurationError("No catalog: pass --catalog URL, set ODR_CATALOG, or add {\"catalog\": \"…\"} to an odr.json (here or in a folder above, up to the repository's root) and adopt it with `odr trust adopt`.")
    }
    return locations
  }

  /// What a request to `url` (http, https or s3) carries: the catalog token
  /// for its origin, read from the keyring, and the S3 access.
  public func networkLocation(_ url: URL) async throws -> NetworkLocation {
    var location = NetworkLocation(url: url, stall: stall)
    if url.scheme == "s3" {
      try S3Access.checkBucket(of: url)
      location.s3 = try S3Access.fromEnvironment(environment, endpoint: endpoint)
    } else if let auth, url.scheme == "http" || url.scheme == "https" {
      location.credential = try await CatalogAuth.credential(auth, for: url, tokens: catalogTokens)
    }
    return location
  }

  // MARK: Reading each setting

  private static func locations(_ given: [String], environment: [String: String], project: ProjectFile?, base: URL?) throws -> [URL] {
    var texts = given
    if texts.isEmpty, let value = environment["ODR_CATALOG"], !value.isEmpty {
      texts = value.split(separator: ",").map(String.init).filter { !$0.isEmpty }
    }
    if texts.isEmpty { texts = project?.catalog ?? [] }
    return try texts.map { try location($0, relativeTo: base) }
  }

  /// One catalog location as the user wrote it: a folder, its catalog.json,
  /// or a file://, http(s):// or s3:// URL. A relative folder is taken from
  /// `base` (default: the current folder).
  public static func location(_ text: String, relativeTo base: URL? = nil) throws -> URL {
    if text.hasPrefix("http://") || text.hasPrefix("https://") || text.hasPrefix("s3://") {
      guard let url = URL(string: text), url.host != nil, !(url.host ?? "").isEmpty else { throw ConfigurationError("'\(text.prefix(200))' is not a valid URL.") }
      guard url.user == nil && url.password == nil else {
        throw ConfigurationError("The catalog URL carries a user name or password; odr never takes credentials from a URL (they would show in process lists, logs and odr's files). Use \"auth\" in odr.json (a keyring item), or AWS credentials for s3://.")
      }
      return url
    }
    if text.hasPrefix("file://") {
      guard let url = URL(string: text), url.isFileURL else { throw ConfigurationError("'\(text)' is not a valid file:// URL.") }
      return url
    }
    guard !text.contains("://") else { throw ConfigurationError("Unsupported catalog URL '\(text.prefix(200))'; use a folder, file://, http(s):// or s3://.") }
    guard let base, !text.hasPrefix("/") else { return URL(filePath: text) }
    return base.appending(path: text)
  }

  private static func trust(_ overrides: Overrides, environment: [String: String], project: ProjectFile?, file: URL?,
                            now: @escaping @Sendable () -> Date) throws -> TrustPolicy {
    var texts = overrides.trust
    var from = "--trust"
    var origin = TrustDecision.PinOrigin.flag
    if texts.isEmpty, let value = environment["ODR_TRUST"] {
      guard !value.isEmpty else {
        throw ConfigurationError("ODR_TRUST is set but empty (a secret this job cannot see? forks' pull requests get no secrets). Set it to the publisher's key (ed25519:…), or unset it.")
      }
      texts = value.split(separator: ",").map(String.init)
      from = "ODR_TRUST"
      origin = .environment
    }
    if texts.isEmpty, let project, let file {
      texts = project.trust ?? []
      from = "odr.json \"trust\""
      origin = .repository(file: file.path, bundle: project.bundle)
    }
    let keys = try texts.map { text in
      do { return try VerifyingKey(text) } catch let error as TrustError { throw ConfigurationError("\(from): \(error.message)") }
    }
    var policy = TrustPolicy(pinned: keys, stateHome: XDGFolders(environment: environment).stateHome, now: now)
    policy.pinOrigin = origin
    policy.allowsFirstUse = overrides.trustOnFirstUse || environment["CI"]?.lowercased() != "true"
    return policy
  }

  private static func budget(_ text: String?) throws -> Int64? {
    guard let text, !text.isEmpty else { return nil }
    guard !ByteSize.exceedsMaximum(text) else {
      throw ConfigurationError("'\(text.prefix(40))' is larger than any store can be; the largest budget is 1024P (2^60 bytes).")
    }
    guard let bytes = ByteSize.parse(text) else {
      throw ConfigurationError("'\(text.prefix(40))' is not a size: write a number and a unit, such as 500M, 1.5G, 1GB or 10MiB (K, M, G, T and KiB… are powers of 1024; KB, MB… of 1000), at most 1024P.")
    }
    return bytes
  }
}

extension ODRConfiguration: CustomStringConvertible, CustomReflectable {
  /// Where the catalog is and what is pinned; never the environment, which
  /// holds credentials.
  public var description: String {
    "ODRConfiguration(locations: \(locations.map(\.redacted)), pinned: \(trust.pinned.count), file: \(file?.path ?? "none"))"
  }

  public var customMirror: Mirror {
    Mirror(self, children: ["locations": locations, "pinned": trust.pinned.count, "maxSize": maxSize as Any, "file": file as Any])
  }
}
