import ArgumentParser
import FoundationEssentials
import ODRBase
import ODRCatalog
import ODRConfiguration
import ODRTrust
import ODRSigning

extension ODR {
  /// `odr trust show|reset|adopt`: what this machine trusts for each
  /// bundle, how to start over, and which odr.json files speak for it.
  struct Trust: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "trust",
      abstract: "Show or reset what this machine trusts for a bundle's catalogs; adopt a project's odr.json.",
      discussion: """
        odr remembers, per bundle, under $XDG_STATE_HOME/odr/<bundle>/trust.json (outside the cache): the highest version accepted through each trust root (a pinned key, or the key trusted on first use), the signers that version handed over to, whether the bundle was ever signed, and which bundle each catalog location serves. A damaged file is an error, never a fresh start; `odr trust reset` is the way to start over.

        Example:
          odr trust show com.example.demo
          odr trust reset com.example.demo
          odr trust adopt
        """,
      subcommands: [Show.self, Reset.self, Adopt.self]
    )

    static func validate(_ bundle: String?) throws {
      if let bundle, !BundleID.isValid(bundle) { throw ValidationError("'\(bundle.prefix(80))' is not a bundle id (letters, digits, '.', '_', '-').") }
    }

    struct Show: ContextualCommand {
      static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print what is trusted for a bundle (every bundle without one).",
        discussion: """
          One row per fact: a root (KIND root: its key, the last version it signed, pinned or trusted on first use, the signer and the next signers), a version accepted unsigned from a location, a catalog location bound to the bundle. Aligned under a header on a terminal; tab-separated rows when piped.

          Example:
            odr trust show com.example.demo --json
          """)

      @Argument(help: "The bundle id (default: every bundle with trust state).")
      var bundle: String?

      @OptionGroup var reporting: OutputOptions

      func validate() throws { try Trust.validate(bundle) }

      struct Report: Encodable {
        struct Root: Encodable {
          let key: String; let firstUse: Bool; let version: Int; let signer: String; let signers: [String]
        }
        let bundle: String
        let signed: Bool
        let roots: [Root]
        let unsignedVersions: [String: Int]
        let locations: [String]
      }

      func run(_ context: CommandContext) async throws {
        let bundles = bundle.map { [$0] } ?? TrustLedger.bundles(stateHome: context.folders.stateHome)
        var reports: [Report] = []
        for name in bundles {
          let ledger = TrustLedger(bundle: name, stateHome: context.folders.stateHome)
          guard let state = try ledger.state() else {
            throw ResourceError(.notFound, "No trust state for \(name) on this machine: no catalog of it was accepted yet.")
          }
          let roots = state.roots.sorted { $0.key < $1.key }.map {
            Report.Root(key: $0.key, firstUse: $0.value.firstUse, version: $0.value.version, signer: $0.value.signer.description,
                        signers: $0.value.signers.map(\.description))
          }
          reports.append(Report(bundle: name, signed: state.signed, roots: roots, unsignedVersions: state.unsignedVersions ?? [:],
                                locations: try ledger.locations()))
        }
        try reporting.print(reports, on: context.output) {
          if reports.isEmpty { context.output.error("no trust state on this machine") }
          Self.table(reports).write(to: context.output)
        }
      }

      /// One row per fact: a root (its key, the version it last signed,
      /// how it came to be trusted, the signer and the next signers), a
      /// version accepted unsigned from a location, a location serving the
      /// bundle.
      static func table(_ reports: [Report]) -> TextTable {
        var table = TextTable(header: ["BUNDLE", "KIND", "VALUE", "VERSION", "DETAIL"])
        for report in reports {
          for root in report.roots {
            let how = root.firstUse ? "trusted on first use" : "pinned"
            table.rows.append([report.bundle, "root", root.key, "\(root.version)",
                               "\(how); signed by \(root.signer); next signers \(root.signers.joined(separator: ", "))"])
          }
          for (location, version) in report.unsignedVersions.sorted(by: { $0.key < $1.key }) {
            table.rows.append([report.bundle, "unsigned", location, "\(version)", "accepted without a signature"])
          }
          for location in report.locations { table.rows.append([report.bundle, "location", location, "-", "-"]) }
        }
        return table
      }
    }

    struct Reset: ContextualCommand {
      static let configuration = CommandConfiguration(
        commandName: "reset",
        abstract: "Forget what is trusted for a bundle: its roots, version floors and locations.",
        discussion: """
          The next catalog of the bundle is then admitted as on a new machine: under the pinned keys, or trusted on first use. Use it after a publisher starts over with a new key (`odr pack --new-trust-root`), or to clear a damaged state file. --locations forgets which bundle every catalog location serves.

          Example:
            odr trust reset com.example.demo
            odr trust reset --locations
          """)

      @Argument(help: "The bundle id.")
      var bundle: String?

      @Flag(help: "Forget the bundle bound to every catalog location.")
      var locations = false

      @Flag(name: .shortAndLong, help: "Print nothing on success.")
      var quiet = false

      func validate() throws {
        guard (bundle != nil) != locations else { throw ValidationError("Name a bundle, or pass --locations.") }
        try Trust.validate(bundle)
      }

      func run(_ context: CommandContext) async throws {
        let forgot: Bool
        if let bundle {
          forgot = try await TrustLedger(bundle: bundle, stateHome: context.folders.stateHome).reset()
        } else {
          forgot = try TrustLedger.resetLocations(stateHome: context.folders.stateHome)
        }
        if !quiet { context.output.error(forgot ? "forgot what was trusted for \(bundle ?? "every location")" : "nothing was trusted for \(bundle ?? "any location")") }
      }
    }

    struct Adopt: ContextualCommand {
      static let configuration = CommandConfiguration(
        commandName: "adopt",
        abstract: "Let a project's odr.json choose the catalog, pins, token and endpoint.",
        discussion: """
          An odr.json found in the current folder or above it (up to the repository's root or $HOME) is inert until you adopt it: its catalog, trust, auth and endpoint count only then, so a cloned repository cannot choose what odr trusts or where it sends credentials. Adopting records the file's path and content; after any change to it, adopt it again. With CI=true the job's own checkout counts as adopted. odr reads an odr.json only when it is yours and only you may change it. An adopted file speaks for its "bundle" only, and never adds a trust root to a bundle that already has one.

          Example:
            odr trust adopt
            odr trust adopt ~/src/weather-app
            odr trust adopt --revoke
          """)

      @Argument(help: ArgumentHelp("The folder whose odr.json to adopt (default: the current folder; the nearest odr.json above it is found).", valueName: "folder"))
      var folder: String?

      @Flag(help: "Forget the adoption: the file is inert again.")
      var revoke = false

      @Flag(name: .shortAndLong, help: "Print nothing on success.")
      var quiet = false

      func run(_ context: CommandContext) async throws {
        let start = folder.map { URL(filePath: context.path($0), directoryHint: .isDirectory) } ?? context.workingDirectory
        guard let file = ProjectFile.locate(from: start, home: context.environment["HOME"].map { URL(filePath: $0) }) else {
          throw ResourceError(.notFound, "No odr.json in \(start.standardizedFileURL.path) or above it (up to the repository's root or $HOME).")
        }
        let adoption = ProjectAdoption(stateHome: context.folders.stateHome)
        if revoke {
          let forgot = try await adoption.revoke(file.path)
          if !quiet { context.output.error(forgot ? "\(file.path) is no longer adopted" : "\(file.path) was not adopted") }
          return
        }
        if let problem = ProjectFile.ownershipProblem(of: file) {
          throw ConfigurationError("Not adopting \(file.path): \(problem). odr reads an odr.json only when it is yours and only you may change it (chown it, or chmod go-w).")
        }
        let bytes = try ProjectFile.bytes(of: file)
        let project = try ProjectFile.parse(bytes, file: file.path)
        try await adoption.adopt(file.path, bytes: bytes)
        guard !quiet else { return }
        var settings: [String] = []
        if let bundle = project.bundle { settings.append("bundle \(bundle)") }
        if let catalog = project.catalog { settings.append("catalog \(catalog.map { URL(string: $0)?.redacted ?? $0 }.joined(separator: ", "))") }
        // counted, never quoted: a mistaken "trust" could hold a private key
        if let trust = project.trust { settings.append("trust \(trust.count) key\(trust.count == 1 ? "" : "s")") }
        if let auth = project.auth { settings.append("auth \(auth.key) of \(auth.service)") }
        if let endpoint = project.endpoint { settings.append("endpoint \(endpoint)") }
        context.output.error("adopted \(file.path)\(settings.isEmpty ? "" : " (\(settings.joined(separator: "; ")))"); after any change to it, run `odr trust adopt` again")
      }
    }
  }
}
