import ArgumentParser
import FoundationEssentials
import ODRExec
import ODRKeyring
import ODRKeyFormat
import ODRCatalog
import ODRPublishing
import ODRSigning
import ODRAge
import ODRBase
#if canImport(Glibc)
import Glibc
#endif

extension ODR {
  /// `odr pack SRC --output DIR`: publishes a folder as a static catalog.
  struct Pack: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "pack",
      abstract: "Publish a folder of tagged files as a static catalog (catalog.json + blobs/), signed and with secrets encrypted.",
      discussion: """
        SRC holds tags.json, which names each tag's category and files (folders end in '/'). DIR receives catalog.json and blobs/<sha256>; serve it from any static host or use it as a file:// catalog. A file in several tags is stored once.

        Secrets tags are encrypted in the age v1 format to their recipients ("recipients" in tags.json, plus --recipient and --recipients-file), with a fresh file key on every pack; a secrets tag with no recipient is refused unless --plaintext-secrets. Every APIKeys document of a secrets tag is validated before anything is written.

        With --sign NAME (a key made by `odr signing-key new`), --sign-key-file F or $ODR_SIGNING_KEY, catalog.json.sig holds a signature of catalog.json by each (--sign is repeatable: moving to post-quantum signatures signs with the old key and the new one; any post-quantum key makes the catalog format 3), the catalog expires after --expires (default 90d) and lists the keys allowed to sign the next versions (--next-signer, default the signing keys). The catalog carries the hand-over chain of the one it replaces (in --output, or --previous for a build that packs into an empty folder), plus a statement by the signing key when --next-signer names other keys: a client that pins an earlier key and keeps no state (CI) follows the chain to the new one. A signing key that the previous catalog does not list as a next signer is refused unless --new-trust-root.

        Example:
          odr pack resources/Demo --output pub --sign release --recipient age1…
        """
    )

    @Argument(help: "The publisher folder (holding tags.json).", completion: .directory)
    var source: String

    @Option(name: .shortAndLong, help: "Where to write the catalog folder.", completion: .directory)
    var output: String

    @Option(help: "The catalog version (overrides tags.json; default 1). Clients refuse older versions than they have seen.")
    var catalogVersion: Int?

    @Option(help: ArgumentHelp("Publish under this bundle id instead of tags.json's (a staging or trial catalog of the same folder).", valueName: "id"))
    var bundle: String?

    @OptionGroup var signing: SigningKeyOptions

    @Option(help: ArgumentHelp("How long the signed catalog is valid: 90s, 12h, 30d, 2w (default 90d when signing).", valueName: "duration"))
    var expires: String?

    @Option(help: ArgumentHelp("A key allowed to sign the next versions (ed25519:… or ed25519-mldsa65:…); repeatable (default: the signing keys). List a new key here, signed by the old one, to rotate.", valueName: "key"))
    var nextSigner: [String] = []

    @Option(help: ArgumentHelp("The catalog this one replaces, when --output starts empty (a build folder): the folder it was packed into, or its http(s):// or s3:// URL, read as `odr verify` reads it. Its hand-over chain is carried and its signers decide which keys may sign (default: --output).", valueName: "catalog"), completion: .directory)
    var previous: String?

    @Flag(help: "Sign with a key the previous catalog does not list as a next signer, starting a new trust root: no hand-over chain leads to it, so every client must pin the new key.")
    var newTrustRoot = false

    @Option(help: ArgumentHelp("Encrypt every secrets tag to this recipient too (age1…, age1pq1…, an SSH public key \"ssh-ed25519 AAAA…\" / \"ssh-rsa AAAA…\", or an AWS KMS key awskms:arn:aws:kms:…); repeatable.", valueName: "recipient"))
    var recipient: [String] = []

    @Option(help: ArgumentHelp("A file of recipients, one per line, # comments; SSH keys as in authorized_keys (options skipped).", valueName: "file"), completion: .file())
    var recipientsFile: [String] = []

    @Flag(help: "Check the folder, the documents and the recipients, and show what each secrets tag would be encrypted to; write nothing and ask no key service.")
    var dryRun = false

    @Flag(help: "Publish secrets tags that have no recipient in plaintext (with a warning) instead of refusing.")
    var plaintextSecrets = false

    @OptionGroup var reporting: OutputOptions

    func validate() throws {
      if let catalogVersion, catalogVersion < 1 { throw ValidationError("--catalog-version must be 1 or more.") }
      if let expires { _ = try DurationText.seconds(expires, option: "--expires") }
      if let bundle, !BundleID.isValid(bundle) { throw ValidationError("--bundle '\(bundle.prefix(100))' is not a bundle id (letters, digits, '.', '_', '-').") }
    }

    struct Summary: Encodable {
      struct Tag: Encodable {
        let name: String; let category: String; let files: Int; let bytes: Int64; let secrets: Bool
        @NullWhenAbsent var recipients: Int?
      }
      let bundle: String
      let version: Int
      let output: String
      let format: Int
      @NullWhenAbsent var signedBy: String?
      /// The other keys that signed (a move to post-quantum signs with two).
      @NullWhenAbsent var alsoSignedBy: [String]?
      @NullWhenAbsent var expires: String?
      let tags: [Tag]
    }

    struct Plan: Encodable {
      let tag: String
      let recipients: [String]
    }

    func run(_ context: CommandContext) async throws {
      var options = PackOptions()
      options.recipients = try recipients(context)
      options.plaintextSecrets = plaintextSecrets
      options.bundle = bundle
      options.keyService = IdentityOptions.keyService(context)
      if dryRun {
        let plan = try Publisher(source: context.url(source)).recipients(options: options).sorted { $0.key < $1.key }
          .map { Plan(tag: $0.key, recipients: $0.value.map(\.description)) }
        try reporting.print(plan, on: context.output) {
          var table = TextTable(header: ["TAG", "RECIPIENT"])
          table.rows = plan.flatMap { entry in entry.recipients.isEmpty ? [[entry.tag, plaintextSecrets ? "PLAINTEXT" : "none: refused"]] : entry.recipients.map { [entry.tag, $0] } }
          table.write(to: context.output, notes: ["dry run: nothing was encrypted or written"])
        }
        return
      }
      options.newTrustRoot = newTrustRoot
      if let previous {
        switch try CatalogOptions.Place(previous, context) {
        case .remote(let url):
          options.previous = try await PreviousCatalog.published(at: url, transport: CatalogOptions.transport(for: url, stall: nil, context))
        case .folder(let folder):
          options.previous = try PreviousCatalog.folder(folder)
        }
      }
      options.signingKeys = try await signing.keys(context)
      if let expires { options.expires = context.now().addingTimeInterval(Double(try DurationText.seconds(expires, option: "--expires"))) }
      options.nextSigners = try nextSigner.map { text in
        do { return try VerifyingKey(text) } catch let error as TrustError { throw error.at("--next-signer") }
      }
      let documentRules = options.validateSecrets
      options.validateSecrets = { path, data in
        try documentRules(path, data)
        do { _ = try SecretVariables(keys: try APIKeysDocument.parse(data).keys) } catch let error as ExecError {
          throw ResourceError(.invalidSource, "\(path): \(error.message) Nothing was written.")
        }
      }
      let quiet = reporting.quiet
      options.notify = { if !quiet { context.output.error($0) } }
      let catalog = try await Publisher(source: context.url(source)).pack(to: context.url(output), version: catalogVersion, options: options)
      let tags = catalog.tags.sorted { $0.key < $1.key }.map {
        Summary.Tag(name: $0.key, category: $0.value.category.rawValue, files: $0.value.files.count, bytes: $0.value.size,
                    secrets: $0.value.secrets, recipients: $0.value.encryption?.recipients)
      }
      let summary = Summary(bundle: catalog.bundle, version: catalog.version, output: output,
                            format: catalog.formatVersion, signedBy: options.signingKeys.first?.verifyingKey.description,
                            alsoSignedBy: options.signingKeys.count > 1 ? options.signingKeys.dropFirst().map(\.verifyingKey.description) : nil, expires: catalog.expires?.formatted(.iso8601), tags: tags)
      try reporting.print(summary, on: context.output) {
        let signers = options.signingKeys.map(\.verifyingKey.shortDescription).joined(separator: " and ")
        let signature = summary.signedBy == nil ? "unsigned" : "signed by \(signers) (format \(summary.format)), expires \(summary.expires ?? "never")"
        var table = TextTable(header: ["TAG", "CATEGORY", "FILES", "SIZE", "SECRETS"])
        table.rows = tags.map { tag in
          let secrets = tag.secrets ? (tag.recipients.map { "encrypted to \($0)" } ?? "PLAINTEXT") : "-"
          return [tag.name, tag.category, "\(tag.files)", ByteSize.format(tag.bytes), secrets]
        }
        table.write(to: context.output, notes: ["packed \(catalog.bundle) version \(catalog.version) into \(output), \(signature)"])
      }
    }

    private func recipients(_ context: CommandContext) throws -> [AgeRecipient] {
      var found = try recipient.map(AgeRecipient.init)
      for path in recipientsFile {
        guard let data = FileManager.default.contents(atPath: context.path(path)) else { throw ValidationError("Cannot read the recipients file '\(path)'.") }
        do {
          let (recipients, withOptions) = try AgeRecipient.parseFile(String(decoding: data, as: UTF8.self))
          if !withOptions.isEmpty {
            context.output.error("note: \(path): authorized_keys options skipped on line\(withOptions.count == 1 ? "" : "s") \(withOptions.map(String.init).joined(separator: ", ")); only the keys are used")
          }
          found += recipients
        } catch let error as TrustError {
          throw error.at(path)
        }
      }
      return found
    }
  }
}
