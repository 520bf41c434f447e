import FoundationEssentials
import ODRBase
import ODRKeyring
import ODRKeys
#if canImport(Glibc)
import Glibc
#endif

/// The hot path of scripts, `odr get NAME [--service ID] [--timeout S]`,
/// recognised without ArgumentParser.
///
/// It runs on the main thread before the concurrency runtime has started
/// a thread, and reads the keyring on that thread too.
///
/// ArgumentParser's reflection costs about 11 M instructions per process, a
/// quarter of a cold `odr get` (see docs/performance.md). Only the plain form
/// is taken here, with every value already valid; anything else (help, other
/// options, bad input) returns nil and goes through ArgumentParser, which
/// gives the usual messages. Behaviour is that of ``ODR/GetKey``.
struct QuickGet {
  let name: String
  let service: String
  let store: KeyStoreKind
  let timeout: Double
  let stateHome: URL

  init?(arguments: [String], environment: [String: String], workingDirectory: URL) {
    guard arguments.count >= 2, arguments[0] == "get" else { return nil }
    var name: String?
    var options = QuickStoreOptions()
    var rest = arguments.dropFirst()[...]
    while let argument = rest.popFirst() {
      guard let taken = options.take(argument, from: &rest) else { return nil }
      if taken { continue }
      // another option, or a second name: the full path
      guard !argument.hasPrefix("-"), name == nil else { return nil }
      name = argument
    }
    // invalid input takes the full path, which gives the message
    guard let name, dropping(.isTheAnswer, { try KeyringInput.validate(userKeyName: name) }) != nil,
          let service = options.validService(environment),
          let store = options.validStore(environment, workingDirectory: workingDirectory)
    else { return nil }
    self.name = name
    self.service = service
    self.store = store
    timeout = options.timeout
    stateHome = XDGFolders(environment: environment).stateHome
  }

  /// Prints the value and exits, or exits with the code of the failure.
  /// Blocks the calling thread: call it before anything else is running.
  func run() -> Never {
    do {
      let store: any BlockingReads = switch self.store {
      case .kernel: try KernelKeyringStore(service: service, stateHome: stateHome)
      default: try SecretServiceStore(service: service, deadline: StoreOptions.deadline(seconds: timeout), stateHome: stateHome)
      }
      let output = Output.process()
      ODR.GetKey.print(try store.keyValueBlocking(named: name), to: output)
      try output.finish()
      exit(0)
    } catch {
      ExitStatus.exit(with: error)
    }
  }
}
