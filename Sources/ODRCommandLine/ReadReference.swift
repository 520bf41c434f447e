import ODRBase
import ArgumentParser
import ODRExec

extension ODR {
  /// `odr read odr://… [--out-file F] [-n]`
  struct ReadReference: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "read",
      abstract: "Print the value of one odr:// reference, or write it to a 0600 file.",
      discussion: """
        odr://KEY names a key of the current service (--service, else $ODR_SERVICE, else the catalog's bundle); odr://SERVICE/KEY names another. The value goes to standard output exactly, with a newline only on a terminal (never with -n), or with --out-file to a file written atomically with mode 0600.

        Example:
          odr read odr://com.example.demo/Weather --out-file weather.key
        """
    )

    @OptionGroup var source: KeySourceOptions

    @Argument(help: ArgumentHelp("The reference, odr://KEY or odr://SERVICE/KEY.", valueName: "reference"))
    var reference: String

    @Option(help: ArgumentHelp("Write the value to this file (0600) instead of standard output.", valueName: "file"), completion: .file())
    var outFile: String?

    @Flag(help: "Replace --out-file if it exists.")
    var force = false

    @Flag(name: .customShort("n"), help: "Never print a trailing newline.")
    var noNewline = false

    func validate() throws {
      do { _ = try SecretReference(reference) } catch let error as ExecError { throw ValidationError("\(reference.prefix(80)): \(error.message).") }
      if source.onlyNames != nil { throw ValidationError("--only does not apply to odr read.") }
    }

    func run(_ context: CommandContext) async throws {
      let parsed = try SecretReference(reference)
      let value = try await source.resolve([parsed], in: context, place: { _ in "odr read" })[parsed] ?? ""
      if let outFile { return try SecretFile.write(value, to: context.path(outFile), force: force) }
      context.output.write(context.output.stdoutIsTerminal && !noNewline ? value + "\n" : value)
    }
  }
}
