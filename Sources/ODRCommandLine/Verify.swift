import ArgumentParser
import FoundationEssentials
import ODRResources
import ODRTrust

extension ODR {
  /// `odr verify DIR`: checks a published catalog folder.
  struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "verify",
      abstract: "Check a published catalog folder: signature, expiry margin, every blob's SHA-256.",
      discussion: """
        For the publisher's CI, before and after uploading. Exits 4 when the catalog is unsigned, its signature does not verify (or is not by a --trust key), it expires within --min-validity, a blob is missing or damaged, or a secrets tag is in plaintext.

        Example:
          odr verify /srv/www/odr --min-validity 7d --trust ed25519:…
        """
    )

    @Argument(help: "The catalog folder made by `odr pack`.")
    var folder: String

    @Option(help: ArgumentHelp("Fail when the catalog expires sooner than this: 12h, 7d, 2w (default 0s: not expired).", valueName: "duration"))
    var minValidity: String?

    @Option(help: ArgumentHelp("Require a signature by this key (ed25519:…); repeatable.", valueName: "key"))
    var trust: [String] = []

    @OptionGroup var reporting: OutputOptions

    func validate() throws {
      if let minValidity { _ = try DurationText.seconds(minValidity, option: "--min-validity") }
    }

    func run() async throws {
      let keys = try trust.map { text in
        do { return try VerifyingKey(text) } catch let error as TrustError { throw ValidationError(error.message) }
      }
      let margin = try minValidity.map { try DurationText.seconds($0, option: "--min-validity") } ?? 0
      let report = try PublishedCatalogCheck(folder: URL(filePath: folder)).run(trusted: Set(keys), minValidity: .seconds(margin))
      try reporting.print(report, failed: !report.problems.isEmpty) {
        var lines = ["\(report.bundle) version \(report.version): \(report.blobs) blobs checked"]
        lines.append(report.signedBy.map { "  signed by \($0)" } ?? "  not signed")
        lines.append("  expires \(report.expires?.formatted(.iso8601) ?? "never")")
        lines += report.problems.map { "  PROBLEM: \($0)" }
        Output.write(lines.joined(separator: "\n") + "\n")
      }
      if !report.problems.isEmpty {
        throw ResourceError(.integrity, "\(folder): \(report.problems.count) problem\(report.problems.count == 1 ? "" : "s") found; clients would refuse or fail on this catalog.")
      }
    }
  }
}
