/// What `odr fetch` did to each key: names and outcomes, never values.
public struct ImportReport: Sendable, Equatable, Codable {
  /// One key's outcome.
  public enum Outcome: String, Sendable, Codable {
    case added, changed, unchanged, pruned
  }

  public struct Entry: Sendable, Equatable, Codable {
    public let name: String
    public let outcome: Outcome

    public init(name: String, outcome: Outcome) {
      self.name = name
      self.outcome = outcome
    }
  }

  /// The bundle (keyring service) the keys went to.
  public let service: String
  /// The tags fetched.
  public let tags: [String]
  /// One entry per key, sorted by name.
  public let keys: [Entry]
  /// True when nothing was written (`odr fetch --dry-run`): the outcomes
  /// say what would happen.
  public var dryRun = false

  public init(service: String, tags: [String], keys: [Entry], dryRun: Bool = false) {
    self.service = service
    self.tags = tags
    self.keys = keys
    self.dryRun = dryRun
  }
}
