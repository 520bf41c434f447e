import ArgumentParser
import FoundationEssentials
import ODRResources

extension ODR {
  /// `odr status`: each tag's category, presence, size and pins.
  struct Status: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "status",
      abstract: "Explain each tag: category, on disk or not, size, and who pins it.",
      discussion: """
        --verify also re-hashes every file in the store and exits 4 if one is damaged.

        Example:
          odr status --catalog /srv/odr
          odr status --json
          odr status --verify --offline
        """
    )

    @OptionGroup var catalog: CatalogOptions

    @OptionGroup var reporting: OutputOptions

    @Flag(help: "Re-hash every file in the store; exit 4 if one does not match.")
    var verify = false

    struct Report: Encodable {
      struct Verification: Encodable { let checked: Int, damaged: [String] }
      let bundle: String, version: Int, store: String, tags: [TagStatus]
      @NullWhenAbsent var verification: Verification?
    }

    func run(_ context: CommandContext) async throws {
      let resources = try await catalog.loadFromDisk(context)
      let tags = try resources.tagStatuses()
      let verification = verify ? resources.store.verify() : nil
      let report = Report(bundle: resources.catalog.bundle, version: resources.catalog.version, store: resources.store.root.path, tags: tags,
                          verification: verification.map { Report.Verification(checked: $0.checked, damaged: $0.damaged) })
      try reporting.print(report, failed: verification?.damaged.isEmpty == false) { printText(report) }
      if let verification, !verification.damaged.isEmpty {
        throw ResourceError(.integrity, "\(verification.damaged.count) of \(verification.checked) files in the store are damaged: \(verification.damaged.joined(separator: ", ")). Delete them and run `odr begin` again to re-download.")
      }
    }

    private func printText(_ report: Report) {
      let tags = report.tags
      let verification = report.verification
      var lines = ["\(report.bundle) version \(report.version), store \(report.store)"]
      for tag in tags {
        var state = tag.onDisk ? "on disk" : "not on disk"
        if tag.secrets { state = tag.recipients == nil ? "never on disk (odr fetch imports it)" : tag.onDisk ? "ciphertext on disk" : "not on disk" }
        let secrets = tag.secrets ? (tag.recipients.map { ", secrets encrypted to \($0) recipient\($0 == 1 ? "" : "s")" } ?? ", secrets in plaintext") : ""
        let holders = tag.pinnedBy.map { "\($0.pid)\($0.command.map { " (\($0))" } ?? "")" }.joined(separator: ", ")
        let pinned = tag.pins > 0 ? ", pinned ×\(tag.pins) by \(holders)" : ""
        let used = tag.lastUse.map { ", last used \($0.formatted(.iso8601))" } ?? ""
        lines.append("  \(tag.name)  \(tag.category)\(secrets)  \(tag.files) file\(tag.files == 1 ? "" : "s"), \(ByteSize.format(tag.bytes)), priority \(tag.preservationPriority)  \(state)\(pinned)\(used)")
      }
      if let verification, verification.damaged.isEmpty {
        lines.append("verified: all \(verification.checked) files in the store match their SHA-256")
      }
      Output.write(lines.joined(separator: "\n") + "\n")
    }
  }
}
