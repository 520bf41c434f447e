import ArgumentParser

/// `--json` and `--quiet`, as every command that reports a result takes
/// them: JSON on stdout with `--json` (even with `--quiet`: a script asked
/// for it); with `--quiet`, nothing unless something failed, and then the
/// same report as without it; text otherwise. The error itself goes to
/// stderr whatever the flags.
struct OutputOptions: ParsableArguments {
  @Flag(help: "Print the result as JSON (keys sorted).")
  var json = false

  @Flag(name: .shortAndLong, help: "Print nothing unless something fails.")
  var quiet = false

  /// Whether text for a person (notes, progress) may be printed.
  var isForPeople: Bool { !json && !quiet }

  /// Prints `value` as JSON with --json; else runs `text`, unless --quiet
  /// and nothing `failed`.
  func print(_ value: some Encodable, failed: Bool = false, on output: Output, text: () throws -> Void) throws {
    if json {
      try output.json(value)
    } else if !quiet || failed {
      try text()
    }
  }
}
