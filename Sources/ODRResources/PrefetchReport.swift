/// What `odr prefetch` did for each tag, in the order the tags were started.
public struct PrefetchReport: Sendable, Encodable {
  public enum Outcome: String, Sendable, Encodable {
    case downloaded, alreadyOnDisk = "already-on-disk", failed
  }

  public struct Entry: Sendable, Encodable {
    public let tag: String
    public let category: String
    public let outcome: Outcome
    /// Bytes of the tag's files.
    public let bytes: Int64
    /// Why it failed (for `failed`).
    public let error: String?
    /// The failure's kind (`network`, `integrity`, …), for `failed`.
    public let code: String?
  }

  public let entries: [Entry]

  /// The first failure, if any.
  public var firstFailure: Entry? { entries.first { $0.outcome == .failed } }
}
