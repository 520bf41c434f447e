import ODRBase
import ArgumentParser
import FoundationEssentials
import ODRCatalog
import ODRResources

extension ODR {
  /// `odr status`: each tag's category, presence, size and pins.
  struct Status: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "status",
      abstract: "Explain each tag: category, on disk or not, size, and who pins it.",
      discussion: """
        For a catalog on a host, status reads the copy kept from the last online load and asks nothing; it says when the host last confirmed it. --refresh asks the host first (a conditional request), as fetch and begin do. --verify also re-hashes every file in the store and exits 4 if one is damaged, naming its tag and path.

        On a terminal: the catalog, then one row per tag under a header. Piped: only the rows, tab-separated (TAG CATEGORY FILES SIZE PRIORITY STATE SECRETS PINNED-BY LAST-USED, "-" when empty); the catalog line and notes go to stderr. --json has every field.

        Example:
          odr status --catalog /srv/odr
          odr status --json
          odr status --verify --offline
          odr status --refresh
        """
    )

    @OptionGroup var catalog: CatalogOptions

    @OptionGroup var reporting: OutputOptions

    @Flag(help: "Re-hash every file in the store; exit 4 if one does not match.")
    var verify = false

    @Flag(help: "Ask the catalog's host for a newer catalog first (default: the copy kept on disk, no request).")
    var refresh = false

    func validate() throws {
      if refresh && catalog.offline { throw ValidationError("--refresh asks the host and --offline forbids it; pick one.") }
    }

    struct Report: Encodable {
      struct Verification: Encodable {
        /// A file of a tag whose blob is damaged.
        struct DamagedFile: Encodable { let sha256: String, tag: String, path: String }
        /// The damaged blobs' SHA-256 names, and the tag files they hold.
        let checked: Int, damaged: [String], damagedFiles: [DamagedFile]
      }
      let bundle: String, version: Int, store: String
      @NullWhenAbsent var checked: Date?
      let tags: [TagStatus]
      @NullWhenAbsent var verification: Verification?
    }

    func run(_ context: CommandContext) async throws {
      let resources = try await refresh ? catalog.load(context) : catalog.loadFromDisk(context)
      let tags = try resources.tagStatuses()
      let verification = verify ? try Self.verification(of: resources) : nil
      let report = Report(bundle: resources.catalog.bundle, version: resources.catalog.version, store: resources.store.root.path,
                          checked: resources.checkedAt, tags: tags, verification: verification)
      try reporting.print(report, failed: verification?.damaged.isEmpty == false, on: context.output) {
        let (notes, table) = Self.text(report)
        table.write(to: context.output, notes: notes)
      }
      if let verification, !verification.damaged.isEmpty {
        let files = verification.damaged.map { sha256 in
          let files = verification.damagedFiles.filter { $0.sha256 == sha256 }
          return files.isEmpty ? "blob \(sha256.prefix(12))… (no tag of this catalog)" : files.map { "\($0.tag): \($0.path)" }.joined(separator: ", ")
        }
        let tags = Set(verification.damagedFiles.map(\.tag)).sorted()
        let names = verification.damaged.map { "\($0.prefix(12))…" }.joined(separator: ", ")
        let again = tags.isEmpty ? "" : ", then `odr begin \(tags.joined(separator: " "))` downloads \(tags.count == 1 ? "it" : "them") again"
        throw ResourceError(.integrity, "\(verification.damaged.count) of \(verification.checked) files in the store are damaged: \(files.joined(separator: "; ")). Delete their blobs from \(resources.store.root.appending(path: "blobs").path) (named by SHA-256: \(names))\(again).")
      }
    }

    /// Every blob in the store re-hashed; each damaged one with the tag
    /// files it holds.
    private static func verification(of resources: ResourceCatalog) throws -> Report.Verification {
      let (checked, damaged) = try resources.store.verify()
      let files = resources.catalog.tags.sorted { $0.key < $1.key }.flatMap { name, tag in
        tag.files.filter { damaged.contains($0.sha256) }.map { Report.Verification.DamagedFile(sha256: $0.sha256, tag: name, path: $0.path) }
      }
      return Report.Verification(checked: checked, damaged: damaged, damagedFiles: files)
    }

    /// "5 minutes ago", for the kept catalog's last check.
    static func ago(_ date: Date, now: Date = Date()) -> String {
      let seconds = max(0, Int(now.timeIntervalSince(date)))
      func count(_ n: Int, _ unit: String) -> String { "\(n) \(unit)\(n == 1 ? "" : "s") ago" }
      switch seconds {
      case ..<60: return "less than a minute ago"
      case ..<3600: return count(seconds / 60, "minute")
      case ..<86400: return count(seconds / 3600, "hour")
      default: return count(seconds / 86400, "day")
      }
    }

    /// The report for a person: the title and notes (the catalog, its
    /// last confirmation, the verification), and one row per tag.
    static func text(_ report: Report, now: Date = Date()) -> (notes: [String], table: TextTable) {
      var notes = ["\(report.bundle) version \(report.version), store \(report.store)"]
      if let checked = report.checked {
        notes.append("the catalog kept on disk, last confirmed by its host \(ago(checked, now: now)); `odr status --refresh` asks the host now")
      }
      if let verification = report.verification, verification.damaged.isEmpty {
        notes.append("verified: all \(verification.checked) files in the store match their SHA-256")
      }
      var table = TextTable(header: ["TAG", "CATEGORY", "FILES", "SIZE", "PRIORITY", "STATE", "SECRETS", "PINNED BY", "LAST USED"])
      table.rows = report.tags.map { tag in
        var state = tag.onDisk ? "on disk" : "not on disk"
        if tag.secrets { state = tag.recipients == nil ? "never on disk" : tag.onDisk ? "ciphertext on disk" : "not on disk" }
        let secrets = tag.secrets ? (tag.recipients.map { "encrypted to \($0)" } ?? "plaintext") : "-"
        let holders = tag.pinnedBy.map { "\($0.pid)\($0.command.map { " (\($0))" } ?? "")" }.joined(separator: ", ")
        return [tag.name, tag.category, "\(tag.files)", ByteSize.format(tag.bytes), "\(tag.preservationPriority)",
                state, secrets, holders.isEmpty ? "-" : holders, tag.lastUse.map { $0.formatted(.iso8601) } ?? "-"]
      }
      return (notes, table)
    }
  }
}
