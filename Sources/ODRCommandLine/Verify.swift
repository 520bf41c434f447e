import ODRBase
import ArgumentParser
import FoundationEssentials
import ODRCatalog
import ODRPublishing
import ODRSigning

extension ODR {
  /// `odr verify DIR|URL`: checks a published catalog.
  struct Verify: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "verify",
      abstract: "Check a published catalog: signature, hand-over chain, expiry margin, every blob's SHA-256.",
      discussion: """
        For the publisher's CI, before and after uploading, and on a schedule against the live host: CATALOG is a folder made by `odr pack`, or an http(s):// or s3:// URL (read as clients read it: s3 with the AWS variables, odr.json's "endpoint" and "auth" apply). Prints the signer, the keys allowed to sign the next versions and the hand-over chain. Exits 4 when the catalog is unsigned, its signature does not verify (or is by neither a --trust key nor a key their hand-over chain leads to), it expires within --min-validity, a blob is missing or damaged, or a secrets tag is in plaintext.

        Example:
          odr verify /srv/www/odr --min-validity 7d --trust ed25519:…
          odr verify https://cdn.example.com/odr/ --min-validity 7d --trust ed25519:…
        """
    )

    @Argument(help: "The catalog: a folder made by `odr pack`, or an http(s):// or s3:// URL.", completion: .directory)
    var catalog: String

    @Option(name: .customLong("network-timeout"), help: ArgumentHelp("Seconds a download may stall without a byte before it fails (default 15).", valueName: "seconds"))
    var networkTimeout: Double?

    @Option(help: ArgumentHelp("Fail when the catalog expires sooner than this: 12h, 7d, 2w (default 0s: not expired).", valueName: "duration"))
    var minValidity: String?

    @Option(help: ArgumentHelp("Require a signature by this key (ed25519:…); repeatable.", valueName: "key"))
    var trust: [String] = []

    @OptionGroup var reporting: OutputOptions

    func validate() throws {
      if let minValidity { _ = try DurationText.seconds(minValidity, option: "--min-validity") }
    }

    func run(_ context: CommandContext) async throws {
      let keys = try trust.map { text in
        do { return try VerifyingKey(text) } catch let error as TrustError { throw error.at("--trust") }
      }
      let margin = try minValidity.map { try DurationText.seconds($0, option: "--min-validity") } ?? 0
      let check: PublishedCatalogCheck
      switch try CatalogOptions.Place(catalog, context) {
      case .remote(let url):
        // As clients read it: odr.json's S3 endpoint and catalog token apply.
        check = PublishedCatalogCheck(location: url, transport: try await CatalogOptions.transport(for: url, stall: networkTimeout, context))
      case .folder(let folder):
        check = PublishedCatalogCheck(location: folder)
      }
      let report = try await check.run(trusted: Set(keys), minValidity: .seconds(margin))
      try reporting.print(report, failed: !report.problems.isEmpty, on: context.output) {
        // Hybrid keys (2,664 characters) are named short here; --json has them whole.
        let short = VerifyingKey.shortDescription(of:)
        var lines = ["\(report.bundle) version \(report.version): \(report.blobs) blobs checked"]
        switch report.signature {
        case .verified: lines.append("  signed by \(report.signedBy.map(short) ?? "?")")
        case .untrusted: lines.append("  signed by \(report.verifiedBy.map(short).joined(separator: ", ")), which no --trust key leads to")
        case .invalid: lines.append("  signature does not verify")
        case .absent: lines.append("  not signed")
        }
        if !report.signers.isEmpty { lines.append("  next signers \(report.signers.map(short).joined(separator: ", "))") }
        for link in report.chain {
          lines.append("  hand-over at version \(link.version): \(short(link.signedBy)) -> \(link.signers.map(short).joined(separator: ", "))")
        }
        lines.append("  expires \(report.expires?.formatted(.iso8601) ?? "never")")
        for (tag, keys) in report.kmsRecipients.sorted(by: { $0.key < $1.key }) {
          lines.append("  \(tag) opens with AWS KMS: \(keys.map { "awskms:\($0)" }.joined(separator: ", "))")
        }
        lines += report.problems.map { "  PROBLEM: \($0)" }
        context.output.write(lines.joined(separator: "\n") + "\n")
      }
      if !report.problems.isEmpty {
        throw ResourceError(.integrity, "\(catalog): \(report.problems.count) problem\(report.problems.count == 1 ? "" : "s") found; clients would refuse or fail on this catalog.")
      }
    }
  }
}
