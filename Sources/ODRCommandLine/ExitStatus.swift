import ArgumentParser
import ODRBase
import ODRExec
import ODRConfiguration
import ODRKeyring
import ODRKeyFormat
import ODRURL
import ODRCatalog
import ODRSigning
import ODRTransports
#if canImport(Glibc)
import Glibc
#endif

/// The one table from errors to messages and exit statuses, for `odr` and
/// `odr-http` alike: 0 ok · 1 failure · 2 usage · 3 not found · 4 integrity ·
/// 5 keyring unavailable · 6 keyring locked · 7 network · 8 out of space ·
/// 9 timeout · 10 access denied · 11 the command's sandbox could not be made ·
/// 126/127 command not executable/found ·
/// 130 cancelled.
enum ExitStatus {
  static func exitCode(for error: KeyringError) -> Int32 {
    switch error.code {
    case .notFound: 3
    case .noLibrary, .noSessionBus, .noProvider, .noDefaultCollection: 5
    case .locked: 6
    case .quotaExceeded: 8
    case .timeout: 9
    case .invalidInput: 2
    case .reserved: 10
    default: 1
    }
  }

  static func exitCode(for error: ResourceError) -> Int32 {
    switch error.code {
    case .notFound: 3
    case .integrity, .unreadableState: 4
    case .network: 7
    case .accessDenied: 10
    case .outOfSpace: 8
    case .secretsTag: 2
    default: 1
    }
  }

  static func exitCode(for error: TrustError) -> Int32 {
    switch error.code {
    case .invalidKey: 2
    case .noIdentity: 10
    default: 4
    }
  }

  static func exitCode(for error: ExecError) -> Int32 {
    switch error.code {
    case .notFound: 3
    case .commandNotFound: 127
    case .commandNotExecutable: 126
    case .invalidInput: 2
    case .noSandbox: 11
    default: 1
    }
  }

  static func exitCode(for error: AWSError) -> Int32 {
    switch error.code {
    case .noToken, .keyNotFound: 3
    case .wrongContext: 4
    case .roleRefused, .credentialsRefused, .keyDenied: 10
    case .service: 7
    default: 1
    }
  }

  static func exitCode(for error: APIError) -> Int32 {
    switch error.code {
    case .invalidURL, .keyUnusable, .invalidHeader: 2
    case .timeout: 9
    case .tooLarge: 8
    default: 7
    }
  }

  /// Says what `error` means on `output`'s stderr (help and version on
  /// its stdout) and returns the exit status it gives.
  static func report(_ error: any Error, to output: Output) -> Int32 {
    func fail(_ message: String, code: Int32) -> Int32 {
      output.error(message)
      return code
    }
    switch error {
    case let error as ResourceError: return fail(error.description, code: exitCode(for: error))
    case let error as KeyringError: return fail(error.forCommandLine.description, code: exitCode(for: error))
    case let error as KeysError:
      // An import cut short by the keyring exits as the keyring's failure does.
      return fail(error.description, code: error.code == .notRecipient ? 10 : (error.underlying as? KeyringError).map(exitCode(for:)) ?? 1)
    case let error as TrustError: return fail(error.description, code: exitCode(for: error))
    case let error as ExecError: return fail(error.description, code: exitCode(for: error))
    case let error as APIError: return fail(error.message, code: exitCode(for: error))
    case let error as AWSError: return fail(error.description, code: exitCode(for: error))
    case let error as URLPolicyError: return fail(error.description, code: 2)
    case let error as ConfigurationError: return fail(error.message, code: 2)
    case let error as SystemError: return fail(error.message, code: error.isOutOfSpace ? 8 : 1)
    case let error as CommandFailure: return fail(error.message, code: error.code)
    case is CancellationError: return fail("Cancelled.", code: 130)
    // Thrown by run() once parsing is over: the message alone says it.
    case let error as ValidationError: return fail(error.message, code: 2)
    default:
      let code = ODR.exitCode(for: error)
      let message = ODR.fullMessage(for: error, columns: output.columns)
      if code == .success {
        if !message.isEmpty { output.write(message + "\n") }
        return 0
      }
      // One line, as every other failure: ArgumentParser's message and its
      // "See 'odr X --help'" hint, without the synopsis it prints around them.
      let see = message.split(separator: "\n").lazy.map { $0.drop { $0 == " " } }.first { $0.hasPrefix("See '") }
      let hint = see.map { " " + ($0.split(separator: "'").dropFirst().first.map { "See '\($0)'." } ?? String($0)) } ?? ""
      let lines = ODR.message(for: error).split(separator: "\n").map { $0.drop { $0 == " " } }
      var line = String(lines.first ?? "")
      if line.hasPrefix("Error: ") { line.removeFirst("Error: ".count) }
      // A list of accepted values ("  - shell") joins the line.
      let items = lines.dropFirst().filter { $0.hasPrefix("- ") }.map { $0.dropFirst(2) }
      if !items.isEmpty { line += " " + items.joined(separator: ", ") }
      if !line.isEmpty { output.error(line + (line.last.map { ".?!".contains($0) } == true ? "" : ".") + hint) }
      // ArgumentParser uses EX_USAGE (64) for usage errors; odr uses 2.
      return code == .validationFailure ? 2 : code.rawValue
    }
  }

  /// ``report(_:to:)`` on the process's stderr, then exits with its status
  /// (the hot path, before any context exists).
  static func exit(with error: any Error) -> Never {
    Glibc.exit(report(error, to: .process()))
  }
}
