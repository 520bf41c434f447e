import ODRBase
import ArgumentParser
import ODRExec

extension ODR {
  /// `odr inject -i TEMPLATE [-o OUT] [--force] [--allow-empty]`
  struct Inject: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "inject",
      abstract: "Fill {{ odr://… }} references in a template with their values.",
      discussion: """
        Every reference is parsed and resolved (one keyring search per service) before anything is written. {{"{{"}} writes a literal {{. Output goes to standard output, or with -o to a file written atomically with mode 0600 that is not replaced without --force. A template with no reference is an error unless --allow-empty.

        Example:
          odr inject -i config.yml.tpl -o config.yml
        """
    )

    @OptionGroup var source: KeySourceOptions

    @Option(name: .customShort("i"), help: ArgumentHelp("The template.", valueName: "file"), completion: .file())
    var input: String

    @Option(name: .customShort("o"), help: ArgumentHelp("Write here (0600, atomically) instead of standard output.", valueName: "file"), completion: .file())
    var output: String?

    @Flag(help: "Replace the output file if it exists.")
    var force = false

    @Flag(help: "Accept a template without references.")
    var allowEmpty = false

    func validate() throws {
      if source.onlyNames != nil { throw ValidationError("--only does not apply to odr inject.") }
    }

    func run(_ context: CommandContext) async throws {
      let template = try SecretTemplate(path: input, text: try SecretFile.read(context.path(input)))
      let references = template.references
      if references.isEmpty && !allowEmpty {
        throw ExecError(.invalidInput, "\(input) holds no {{ odr://… }} reference; pass --allow-empty to copy it anyway.")
      }
      let places = Dictionary(references.map { ($0.reference, $0.place) }, uniquingKeysWith: { first, _ in first })
      let values = try await source.resolve(references.map(\.reference), in: context, place: { places[$0] ?? input })
      let text = template.render(values)
      if let output { return try SecretFile.write(text, to: context.path(output), force: force) }
      context.output.write(text)
    }
  }
}
