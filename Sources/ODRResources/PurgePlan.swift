import FoundationEssentials
public import ODRCatalog

/// What a purge removes and keeps, and why (docs/design.md, "Local store"): blobs no tag of the
/// catalog uses go first; then unpinned tags, lowest preservation priority
/// first and, among equals, least recently used first, until the store fits
/// its budget (or every unpinned tag, with `all`). Pinned tags are never
/// removed, nor are blobs a kept tag still uses.
public struct PurgePlan: Sendable, Encodable {
  /// A tag (or the orphans) the plan removes.
  public struct Removal: Sendable, Encodable {
    public let tag: String
    /// Bytes freed by removing it.
    public let bytes: Int64
    public let reason: String
    let blobs: [String]
  }

  /// A tag on disk the plan keeps, and why.
  public struct Kept: Sendable, Encodable {
    public let tag: String
    public let reason: String
  }

  public let removals: [Removal]
  public let kept: [Kept]
  /// Bytes in the store before and after.
  public let sizeBefore: Int64
  public let sizeAfter: Int64
  /// The budget the plan aims for, if any.
  @NullWhenAbsent public var budget: Int64?
  /// True when the plan was only shown (`--dry-run`), not carried out.
  public internal(set) var dryRun = false

  /// Plans a purge of `store` for `catalog`. `reserve`: bytes to make room
  /// for beyond the budget (a download about to start); `protecting`: tags
  /// that must stay (the ones being requested).
  static func make(store: LocalStore, catalog: Catalog, budget: Int64?, reserve: Int64 = 0, all: Bool,
                   protecting: Set<String> = []) throws -> PurgePlan {
    let onDisk = store.blobSizes()
    let sizeBefore = onDisk.values.reduce(0, +)
    let usage = try store.usage.state.read() ?? TagUsage.File()
    let lastUse = usage.lastUse
    let pins = try store.pins.leases()
    var removals: [Removal] = []
    var kept: [Kept] = []

    // Blobs that no tag of the current catalog uses (older versions, removed tags).
    let used = Set(catalog.tags.values.flatMap { $0.files.map(\.sha256) })
    let orphans = onDisk.keys.filter { !used.contains($0) }.sorted()
    if !orphans.isEmpty {
      removals.append(Removal(tag: "(files no tag uses)", bytes: orphans.reduce(0) { $0 + onDisk[$1]! },
                              reason: "not part of catalog version \(catalog.version)", blobs: orphans))
    }

    func priority(_ name: String) -> Double { usage.priority[name] ?? catalog.tags[name]!.preservationPriority }
    let present = catalog.tags.filter { $0.value.files.contains { onDisk[$0.sha256] != nil } }
    var candidates: [String] = []
    for name in present.keys.sorted() {
      let holders = pins.filter { $0.tag == name }
      if protecting.contains(name) {
        kept.append(Kept(tag: name, reason: "being requested"))
      } else if !holders.isEmpty {
        kept.append(Kept(tag: name, reason: "pinned by " + holders.map { "\($0.pid)\($0.holder.map { " (\($0))" } ?? "")" }.joined(separator: ", ")))
      } else {
        candidates.append(name)
      }
    }
    candidates.sort { (priority($0), lastUse[$0] ?? 0, $0) < (priority($1), lastUse[$1] ?? 0, $1) }

    var size = sizeBefore - (removals.first?.bytes ?? 0)
    let target = budget.map { $0 - reserve }
    var retained = Set(present.keys).subtracting(removals.map(\.tag))
    for (index, name) in candidates.enumerated() {
      if !all, let target, size <= target {
        kept += candidates[index...].map { Kept(tag: $0, reason: "the store fits its budget without removing it") }
        break
      }
      if !all && target == nil {
        kept += candidates[index...].map { Kept(tag: $0, reason: "no budget to purge down to") }
        break
      }
      retained.remove(name)
      let stillUsed = Set(retained.flatMap { catalog.tags[$0]!.files.map(\.sha256) })
      let blobs = Set(catalog.tags[name]!.files.map(\.sha256)).filter { onDisk[$0] != nil && !stillUsed.contains($0) }.sorted()
      let bytes = blobs.reduce(0) { $0 + onDisk[$1]! }
      if blobs.isEmpty { continue }  // what is left of it on disk belongs to kept tags
      let used = lastUse[name].map { "last used \(Date(timeIntervalSince1970: $0).formatted(.iso8601))" } ?? "never used"
      removals.append(Removal(tag: name, bytes: bytes, reason: "not pinned, preservation priority \(priority(name)), \(used)", blobs: blobs))
      size -= bytes
    }
    return PurgePlan(removals: removals, kept: kept.sorted { $0.tag < $1.tag }, sizeBefore: sizeBefore, sizeAfter: size, budget: budget)
  }

  private enum CodingKeys: String, CodingKey { case removals, kept, sizeBefore, sizeAfter, budget, dryRun }
}

extension PurgePlan.Removal {
  private enum CodingKeys: String, CodingKey { case tag, bytes, reason }
}
