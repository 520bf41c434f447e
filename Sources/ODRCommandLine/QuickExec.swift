import ODRBase
import ODRCI
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
  let only: [String]?
  let pristine: Bool
  let mask: Bool
  let timeout: Double
  let commandLine: [String]

  init?(arguments: [String], environment: [String: String]) {
    guard arguments.first == "exec", let terminator = arguments.firstIndex(of: "--"), terminator + 1 < arguments.count else { return nil }
    var service: String?
    var only: [String] = []
    var pristine = false, mask = true
    var timeout = StoreOptions.defaultTimeout
    var rest = arguments[1..<terminator]
    while let argument = rest.popFirst() {
      switch argument {
      case "--service":
        guard let value = rest.popFirst(), service == nil else { return nil }
        service = value
      case "--only":
        guard let value = rest.popFirst() else { return nil }
        only += value.split(separator: ",").map(String.init).filter { !$0.isEmpty }
      case "--timeout":
        guard let value = rest.popFirst().flatMap(Double.init), StoreOptions.validTimeouts.contains(value) else { return nil }
        timeout = value
      case "--pristine": pristine = true
      case "--no-mask": mask = false
      case "--mask": mask = true
      default: return nil
      }
    }
    // invalid input takes the full path, which gives the message
    guard let service = service ?? environment["ODR_SERVICE"].flatMap({ $0.isEmpty ? nil : $0 }),
          dropping(.isTheAnswer, { try KeyringInput.validate(keyService: service) }) != nil
    else { return nil }
    self.service = service
    self.only = only.isEmpty ? nil : only
    self.pristine = pristine
    self.mask = mask
    self.timeout = timeout
    commandLine = Array(arguments[(terminator + 1)...])
  }

  /// Runs the command with the service's keys and exits as it did.
  func run(_ context: CommandContext) async throws -> Never {
    let store = try StoreOptions.secretService(service, timeout: timeout, context)
    let variables = try SecretVariables(keys: try await store.keys(), only: only)
    for warning in variables.skipped { context.output.error(warning) }
    try ODR.Exec.launch(commandLine, variables: variables.variables.map { ($0.name, $0.value) }, masking: variables.variables.map(\.value),
                        pristine: pristine, mask: mask, context)
  }
}
