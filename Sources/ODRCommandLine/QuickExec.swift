import FoundationEssentials
import ODRExec
import ODRKeyring
import ODRKeys

/// The form of `odr exec` every CI step and script starts with,
/// `odr exec [--service ID] [--only A,B]… [--pristine] [--no-mask]
/// [--timeout S] -- CMD…`, recognised without ArgumentParser: its
/// reflection of the command's options was about 2 ms of the 4 ms `odr
/// exec -- true` took over `odr get` (docs/performance.md).
///
/// Only that form is taken, with the service known (from `--service` or
/// `$ODR_SERVICE`) and every value valid; anything else (help, other
/// options, a catalog's bundle to find, bad input) returns nil and goes
/// through ArgumentParser, which gives the usual messages. Behaviour is
/// that of ``ODR/Exec``.
struct QuickExec: Equatable {
  let service: String
  let store: KeyStoreKind
  let only: [String]?
  let pristine: Bool
  let mask: Bool
  let timeout: Double
  let commandLine: [String]

  init?(arguments: [String], environment: [String: String], workingDirectory: URL) {
    guard arguments.first == "exec", let terminator = arguments.firstIndex(of: "--"), terminator + 1 < arguments.count else { return nil }
    var options = QuickStoreOptions()
    var only: [String] = []
    var pristine = false, mask = true
    var rest = arguments[1..<terminator]
    while let argument = rest.popFirst() {
      guard let taken = options.take(argument, from: &rest) else { return nil }
      if taken { continue }
      switch argument {
      case "--only":
        guard let value = rest.popFirst() else { return nil }
        only += value.split(separator: ",").map(String.init).filter { !$0.isEmpty }
      case "--pristine": pristine = true
      case "--no-mask": mask = false
      case "--mask": mask = true
      default: return nil
      }
    }
    // invalid input takes the full path, which gives the message
    guard let service = options.validService(environment),
          let store = options.validStore(environment, workingDirectory: workingDirectory)
    else { return nil }
    self.service = service
    self.store = store
    self.only = only.isEmpty ? nil : only
    self.pristine = pristine
    self.mask = mask
    timeout = options.timeout
    commandLine = Array(arguments[(terminator + 1)...])
  }

  /// Runs the command with the service's keys and exits as it did.
  func run(_ context: CommandContext) async throws -> Never {
    let store = try StoreOptions.makeStore(self.store, service: service, timeout: timeout, context)
    let variables = try SecretVariables(keys: try await store.keys(), only: only)
    for warning in variables.skipped { context.output.error(warning) }
    try ODR.Exec.launch(commandLine, variables: variables.variables.map { ($0.name, $0.value) }, masking: variables.variables.map(\.value),
                        pristine: pristine, mask: mask, context)
  }
}
