import ODRBase
public import ODRKeyFormat

/// A reference to a key, resolved at run time from the keyring:
/// `odr://KEY` (a key of the current service) or `odr://SERVICE/KEY`.
public struct SecretReference: Sendable, Hashable, CustomStringConvertible {
  /// The service (bundle id), or nil for the current one.
  public let service: String?
  public let key: String

  /// Parses a whole reference; the message says what was expected (never
  /// echoing more than the reference itself).
  public init(_ text: some StringProtocol) throws {
    guard text.hasPrefix("odr://") else { throw ExecError(.invalidInput, "expected a reference such as odr://Weather or odr://com.example.demo/Weather") }
    let parts = text.dropFirst(6).split(separator: "/", omittingEmptySubsequences: false)
    guard (1...2).contains(parts.count) else {
      throw ExecError(.invalidInput, "a reference is odr://KEY or odr://SERVICE/KEY, with at most one '/'")
    }
    let service = parts.count == 2 ? String(parts[0]) : nil
    let key = String(parts[parts.count - 1])
    if let service {
      guard BundleID.isValid(service) else {
        throw ExecError(.invalidInput, "in \(Self.shown(text)): Invalid service \(KeyName.quoted(service)): use a bundle id such as com.example.demo (letters, digits, '.', '_', '-').")
      }
    }
    if let problem = KeyName.problem(userKeyName: key) { throw ExecError(.invalidInput, "in \(Self.shown(text)): \(problem)") }
    self.service = service
    self.key = key
  }

  public var description: String { "odr://" + (service.map { $0 + "/" } ?? "") + key }

  static func shown(_ text: some StringProtocol) -> String {
    "'" + (text.count > 80 ? String(text.prefix(80)) + "…" : String(text)) + "'"
  }
}

extension SecretReference {
  /// The values of `references`, with one read per service (`keys(service)`:
  /// one keyring search, or the keys of a pack in memory; a nil `service` is
  /// `defaultService`). A missing key fails naming it, its service and
  /// `place(reference)`.
  public static func resolve(_ references: [SecretReference], defaultService: String?,
                             keys: (String) async throws -> [APIKey],
                             place: (SecretReference) -> String) async throws -> [SecretReference: String] {
    var byService: [String: [SecretReference]] = [:]
    for reference in references {
      guard let service = reference.service ?? defaultService else {
        throw ExecError(.invalidInput, "\(place(reference)): \(reference) names no service, and there is no current one: pass --service, set ODR_SERVICE, or write odr://SERVICE/KEY.")
      }
      byService[service, default: []].append(reference)
    }
    var resolved: [SecretReference: String] = [:]
    for (service, wanted) in byService.sorted(by: { $0.key < $1.key }) {
      let values = Dictionary(try await keys(service).map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })
      for reference in wanted {
        guard let value = values[reference.key] else {
          throw ExecError(.notFound, "\(place(reference)): no key '\(reference.key)' in \(service) (`odr list --service \(service)` shows its keys; `odr fetch` imports them).")
        }
        resolved[reference] = value
      }
    }
    return resolved
  }
}
