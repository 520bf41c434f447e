import ArgumentParser
import FoundationEssentials
import ODRCatalog
import ODRConfiguration
import ODRHTTP
import ODRPublishing
import ODRTransports

extension ODR {
  /// `odr publish DIR DEST`: uploads a published catalog folder safely.
  struct Publish: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "publish",
      abstract: "Upload a catalog folder to a folder or an S3 bucket: blobs first, catalog.json last.",
      discussion: """
        Blobs already at the destination (same name and size; names are SHA-256) are skipped. With --prune, blobs that neither the new catalog nor the one it replaces names (still served to clients mid-switch) are deleted after the catalog switch: a host stops growing with every pack, and packs encrypted to a removed machine go. The signature is uploaded covering both the new catalog and the one still published, then catalog.json, so a publish interrupted at any point leaves readers a valid catalog: the previous one or the new one. A signed catalog that clients of the published one could not follow (signed by a key the published signers do not hand over to, or dropping the published hand-over chain) is refused unless --new-trust-root. On S3, blobs get `Cache-Control: public, max-age=31536000, immutable` and the catalog `no-cache`. S3 credentials come from the standard AWS variables or ~/.aws/credentials; AWS_ENDPOINT_URL (or "endpoint" in odr.json) names an S3-compatible store.

        Example:
          odr publish build/odr s3://example-odr/app --dry-run
          odr publish build/odr /srv/www/odr
        """
    )

    @Argument(help: "The catalog folder made by `odr pack`.", completion: .directory)
    var folder: String

    @Argument(help: ArgumentHelp("Where to publish: a folder or s3://bucket/prefix.", valueName: "dest"), completion: .directory)
    var destination: String

    @Flag(help: "List what would be uploaded; change nothing.")
    var dryRun = false

    @Flag(help: "After the switch, delete the blobs at the destination that neither the new catalog nor the one it replaces names (--dry-run lists them).")
    var prune = false

    @Flag(help: "Publish a signed catalog that clients of the published one cannot follow (another key, no hand-over chain): a new trust root, which every client must pin.")
    var newTrustRoot = false

    @OptionGroup var reporting: OutputOptions

    @Option(name: .customLong("network-timeout"), help: ArgumentHelp("Seconds an upload may stall (default 15).", valueName: "seconds"))
    var networkTimeout: Double = 15

    func run(_ context: CommandContext) async throws {
      let publication = try await Publication(folder: context.url(folder), destination: try target(context), newTrustRoot: newTrustRoot, prune: prune)
      try reporting.print(Plan(destination: publication.destination.name, dryRun: dryRun, steps: publication.steps), on: context.output) {
        guard dryRun else { return }
        TextTable(header: ["ACTION", "PATH", "SIZE"], rows: publication.steps.map { [$0.action.rawValue, $0.path, ByteSize.format($0.bytes)] })
          .write(to: context.output)
      }
      if publication.dropsSignature {
        context.output.error("warning: this catalog is unsigned and replaces a signed one; clients that saw a signed catalog will refuse it.")
      }
      guard !dryRun else { return }
      try await publication.run()
      if reporting.isForPeople {
        let uploaded = publication.steps.filter { $0.action == .upload && $0.path.hasPrefix("blobs/") }
        let skipped = publication.steps.filter { $0.action == .skip }.count
        let pruned = publication.pruned
        let deleted = prune ? ", then \(pruned.count) blob\(pruned.count == 1 ? "" : "s") no catalog names deleted (\(ByteSize.format(pruned.reduce(0) { $0 + $1.bytes })))" : ""
        context.output.error("published to \(publication.destination.name): \(uploaded.count) blob\(uploaded.count == 1 ? "" : "s") uploaded (\(ByteSize.format(uploaded.reduce(0) { $0 + $1.bytes }))), \(skipped) already there, then the catalog\(deleted).")
      }
    }

    private func target(_ context: CommandContext) throws -> any PublishDestination {
      if destination.hasPrefix("s3://") {
        guard let url = URL(string: destination), let host = url.host, !host.isEmpty else {
          throw ValidationError("'\(destination.prefix(200))' is not an s3://bucket/prefix URL.")
        }
        try S3Access.checkBucket(of: url)
        let access = try S3Access.fromEnvironment(context.environment, endpoint: try CatalogOptions.discover(context).endpoint)
        return S3Destination(url, access: access, timeouts: HTTPTransport.Timeouts(stall: .milliseconds(Int(networkTimeout * 1000))))
      }
      guard !destination.contains("://") || destination.hasPrefix("file://") else {
        throw ValidationError("odr publish writes to a folder or s3://bucket/prefix; for a web server, publish to its document root.")
      }
      let url = destination.hasPrefix("file://") ? URL(string: destination).map { URL(filePath: $0.path) } : context.url(destination)
      guard let url else { throw ValidationError("'\(destination.prefix(200))' is not a valid file:// URL.") }
      return FolderDestination(url)
    }

    private struct Plan: Encodable {
      let destination: String
      let dryRun: Bool
      let steps: [Publication.Step]
    }
  }
}

/// S3 as `odr publish`'s destination: ODRHTTP uploads, ODRPublishing decides
/// what goes where; neither needs the other.
extension S3Destination: PublishDestination {}
