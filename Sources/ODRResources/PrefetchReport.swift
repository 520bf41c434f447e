public import ODRBase
public import ODRCatalog
/// What `odr prefetch` did for each tag, in the order the tags were started.
public struct PrefetchReport: Sendable, Encodable {
  public enum Outcome: String, Sendable, Encodable {
    case downloaded, alreadyOnDisk = "already-on-disk", failed
    /// A secrets tag whose keys went into the keyring.
    case imported
    /// A secrets tag left alone (no keyring here); `error` says why.
    case skipped
  }

  public struct Entry: Sendable, Encodable {
    public let tag: String
    public let category: String
    public let outcome: Outcome
    /// Bytes of the tag's files.
    public let bytes: Int64
    /// Why it failed (for `failed`).
    @NullWhenAbsent public var error: String?
    /// The failure's kind (`network`, `integrity`, …), for `failed`.
    @NullWhenAbsent public var code: ResourceError.Code?

    public init(tag: String, category: String, outcome: Outcome, bytes: Int64, error: String?, code: ResourceError.Code?) {
      self.tag = tag
      self.category = category
      self.outcome = outcome
      self.bytes = bytes
      self.error = error
      self.code = code
    }
  }

  public let entries: [Entry]

  public init(entries: [Entry]) {
    self.entries = entries
  }

  /// The first failure, if any.
  public var firstFailure: Entry? { entries.first { $0.outcome == .failed } }
}
