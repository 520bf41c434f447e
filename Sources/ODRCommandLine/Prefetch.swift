import ArgumentParser
import ODRResources

extension ODR {
  /// `odr prefetch [--parallel N] [--json]`
  struct Prefetch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Download every initial tag, then the prefetch tags in their order, several at a time.",
      discussion: """
        As the App Store does after an install. Downloads run in parallel (--parallel, default 6,
        as browsers use per host), started in order; one failure does not stop the others.
        Prefetched tags are not pinned.
        Prints what succeeded and what failed and why; exits with the first failure's code.

        Example:
          odr prefetch --catalog https://cdn.example.com/odr
          odr prefetch --parallel 8 --json
        """
    )

    @OptionGroup var catalog: CatalogOptions

    @Option(help: ArgumentHelp("Downloads at a time (1–32).", valueName: "n"))
    var parallel = 6

    @Flag(help: "Print the outcome as JSON.")
    var json = false

    @Flag(name: .shortAndLong, help: "Print nothing on success.")
    var quiet = false

    func validate() throws {
      guard (1...32).contains(parallel) else { throw ValidationError("--parallel must be between 1 and 32.") }
    }

    func run() async throws {
      let resources = try await catalog.load()
      let report = await resources.prefetch(parallel: parallel)
      if json {
        try Output.json(report)
      } else if !quiet || report.firstFailure != nil {
        let lines = report.entries.map { entry in
          let what = switch entry.outcome {
          case .downloaded: "downloaded"
          case .alreadyOnDisk: "on disk   "
          case .failed: "FAILED    "
          }
          return "\(what) \(entry.tag) (\(entry.category), \(entry.bytes) bytes)\(entry.error.map { ": \($0)" } ?? "")"
        }
        Output.write(lines.joined(separator: "\n") + (lines.isEmpty ? "" : "\n"))
      }
      if let failure = report.firstFailure {
        let failed = report.entries.filter { $0.outcome == .failed }.count
        throw ResourceError(ResourceError.Code.all.first { $0.rawValue == failure.code } ?? .network,
                            "\(failed) of \(report.entries.count) tags failed; the first: \(failure.tag): \(failure.error ?? "")")
      }
    }
  }
}
