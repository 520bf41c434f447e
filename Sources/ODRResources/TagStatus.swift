public import FoundationEssentials
public import ODRCatalog

/// One tag as `odr status` reports it: what it is, whether its files are on
/// disk, who pins it and when it was last used. Encodes to the schema of
/// docs/json.md.
public struct TagStatus: Sendable, Encodable {
  /// A process holding a pin on the tag.
  public struct Pin: Sendable, Encodable {
    public let pid: Int32
    /// The holder's command name, when it is still known.
    @NullWhenAbsent public var command: String?
    public let since: Date
  }

  public let name: String
  public let category: String
  public let order: Int
  /// The tag's priority: the one set by `odr priority`, else the catalog's.
  public let preservationPriority: Double
  public let secrets: Bool
  /// How many identities a secrets tag is encrypted to (nil: plaintext or not a secrets tag).
  @NullWhenAbsent public var recipients: Int?
  public let files: Int
  public let bytes: Int64
  public let onDisk: Bool
  public let pins: Int
  public let pinnedBy: [Pin]
  @NullWhenAbsent public var lastUse: Date?
}

extension ResourceCatalog {
  /// Every tag's status, in category, then order, then name order.
  public func tagStatuses() throws -> [TagStatus] {
    let leases = try store.pins.leases()
    let usage = try store.usage.state.read() ?? TagUsage.File()
    return catalog.tags.sorted { ($0.value.category, $0.value.order, $0.key) < ($1.value.category, $1.value.order, $1.key) }.map { name, tag in
      let pins = leases.filter { $0.tag == name }
      return TagStatus(name: name, category: tag.category.rawValue, order: tag.order,
                       preservationPriority: usage.priority[name] ?? tag.preservationPriority,
                       secrets: tag.secrets, recipients: tag.encryption?.recipients, files: tag.files.count, bytes: tag.size,
                       onDisk: tag.files.allSatisfy(store.contains), pins: pins.count,
                       pinnedBy: pins.map { TagStatus.Pin(pid: $0.pid, command: $0.holder, since: Date(timeIntervalSince1970: $0.since)) },
                       lastUse: usage.lastUse[name].map(Date.init(timeIntervalSince1970:)))
    }
  }
}
