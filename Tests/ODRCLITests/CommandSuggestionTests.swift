import ArgumentParser
@testable import ODRCommandLine
import Testing

/// Usage mistakes name what the user typed, with the closest command or
/// option, before anything else ArgumentParser would say first.
@Suite struct CommandSuggestionTests {
  @Test(arguments: [
    (["fecth", "APIKeys"], "'fecth' is not an odr command. Did you mean 'fetch'? (`odr --help` lists them.)"),
    (["help", "nope"], "'nope' is not an odr command. `odr --help` lists them."),
    (["fetch", "APIKeys"], nil),
    (["--version"], nil),
  ] as [([String], String?)])
  func anUnknownCommandIsNamed(_ arguments: [String], _ message: String?) {
    #expect(CommandSuggestion.problem(arguments, commands: ODR.configuration.subcommands.map { $0._commandName }) == message)
  }

  @Test(arguments: [
    (["identity", "nwe"], "'nwe' is not a subcommand of odr identity. Did you mean 'new'? (`odr identity --help` lists them.)"),
    (["trust", "shwo", "x"], "'shwo' is not a subcommand of odr trust. Did you mean 'show'? (`odr trust --help` lists them.)"),
    (["identity", "public", "laptop"], "'public' is not a subcommand of odr identity. Did you mean 'recipient'? (`odr identity --help` lists them.)"),
    (["signing-key", "recipient", "release"], "'recipient' is not a subcommand of odr signing-key. Did you mean 'public'? (`odr signing-key --help` lists them.)"),
    (["identity", "new", "laptop"], nil),
    (["get", "NAME"], nil),
  ] as [([String], String?)])
  func anUnknownSubcommandIsNamed(_ arguments: [String], _ message: String?) {
    #expect(CommandSuggestion.nestedProblem(arguments, root: ODR.self) == message)
  }

  @Test(arguments: [
    (["pack", "src", "--ouput", "out"], "Unknown option '--ouput'"),
    (["pack", "src", "--sing", "k", "--ouput", "out"], "Unknown option '--sing'"),
    (["pack", "src"], nil),  // only missing: ArgumentParser's message stands
  ] as [([String], String?)])
  func anUnknownOptionIsNamedBeforeAMissingOne(_ arguments: [String], _ message: String?) throws {
    let error = try #require(throws: (any Error).self) { try ODR.parseAsRoot(arguments) }
    #expect(ODR.message(for: error).hasPrefix("Missing expected argument '--output"))
    let found = CommandSuggestion.unknownBehindMissing(arguments, error: error, root: ODR.self)
    #expect(found.map { ODR.message(for: $0) }?.hasPrefix(message ?? "-") ?? (message == nil), "\(found.map { ODR.message(for: $0) } ?? "nil")")
  }

  @Test(arguments: [
    (["--verison"], "Unknown option '--verison'. Did you mean '--version'? See 'odr --help'."),
    (["fetch", "APIKeys", "--dryrun"], "Unknown option '--dryrun'. Did you mean '--dry-run'? See 'odr fetch --help'."),
    (["identity", "new", "x", "--stroe", "kernel"], "Unknown option '--stroe'. Did you mean '--store'? See 'odr identity new --help'."),
    (["get", "Weather", "--zzzzzzzz"], nil),  // nothing close: ArgumentParser's message stands
  ] as [([String], String?)])
  func anUnknownOptionSaysTheClosest(_ arguments: [String], _ message: String?) throws {
    let error = try #require(throws: (any Error).self) { try ODR.parseAsRoot(arguments) }
    #expect(CommandSuggestion.unknownOption(arguments, error: error, root: ODR.self)?.message == message)
  }
}
