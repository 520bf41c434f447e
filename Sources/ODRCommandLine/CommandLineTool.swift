import ArgumentParser
import ODRBase
import FoundationEssentials
import CHardening
import ODRExec
#if canImport(Glibc)
import Glibc
#endif

/// The entry point of the `odr` and `odr-http` executables.
public enum CommandLineTool {
  /// Runs `odr` with the process's arguments and exits with its code.
  /// `http` runs `odr http` (nil: hand it to the helper, `odr-http`).
  package static func main(http: (any HTTPRunner)?) async {
    CoreDumps.disable()  // again in odr (runHotPath did first): a no-op
    // Buffers of 128 KiB and more (transfers stream in 256 KiB chunks) are
    // mapped and unmapped one by one. glibc's adaptive threshold would move
    // them onto the heap, where chunks freed on the event loop's thread
    // fragment it: a 1 GiB upload peaked at 83 MiB RSS instead of ~40.
    _ = odr_map_large_buffers()
    CommandRunner.recordInheritedSignals()
    let context = CommandContext.process(network: http.map { .runner($0) } ?? .handOff)
    exit(await run(Array(CommandLine.arguments.dropFirst()), in: context))
  }

  /// Runs the command `arguments` name in `context` and returns its exit
  /// status; every failure is one line on the context's stderr
  /// (``ExitStatus``). `odr` runs it with the process's context; a test
  /// runs it with its own, in its own process.
  package static func run(_ arguments: [String], in context: CommandContext) async -> Int32 {
    do {
      // `odr exec` starts every CI step: its plain form without
      // ArgumentParser (QuickExec), else parsed alone, not the whole
      // command tree (about 2 ms less), as are the other commands scripts
      // and fleets run most. Help and usage errors go through the root
      // below, so they read `odr exec`.
      if let quick = QuickExec(arguments: arguments, environment: context.environment, workingDirectory: context.workingDirectory) { try await quick.run(context) }
      if let hot = arguments.first.flatMap({ hotCommands[$0] }),
         let command = dropping(.isTheAnswer, { try hot.parse(Array(arguments.dropFirst())) }) {
        try await command.run(context)
        try context.output.finish()
        return 0
      }
      if let problem = CommandSuggestion.problem(arguments, commands: ODR.configuration.subcommands.map { $0._commandName })
          ?? CommandSuggestion.nestedProblem(arguments, root: ODR.self) {
        throw ValidationError(problem)
      }
      var command: any ParsableCommand
      do { command = try ODR.parseAsRoot(arguments) } catch {
        let unknown = CommandSuggestion.unknownBehindMissing(arguments, error: error, root: ODR.self) ?? error
        throw CommandSuggestion.unknownOption(arguments, error: unknown, root: ODR.self) ?? unknown
      }
      if let command = command as? any ContextualCommand {
        try await command.run(context)
      } else {
        // ArgumentParser's own: `help`, or a command group named alone
        // (`odr identity`), which throw the help to print.
        try command.run()
      }
      try context.output.finish()
      return 0
    } catch {
      return ExitStatus.report(error, to: context.output)
    }
  }

  /// The commands parsed alone, not as part of the whole tree, when their
  /// arguments parse: what CI steps, scripts and fleets run most.
  static let hotCommands: [String: any ContextualCommand.Type] = [
    "exec": ODR.Exec.self, "begin": ODR.Begin.self, "env": ODR.Env.self, "get": ODR.GetKey.self,
    "fetch": ODR.Fetch.self, "status": ODR.Status.self, "end": ODR.End.self,
  ]

  /// The path of this process's executable (`/proc/self/exe`).
  static var executablePath: String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    return length > 0 ? String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
  }

  /// Runs the hot paths, `odr get NAME` and `odr --version`, on the calling
  /// thread without ArgumentParser, and exits; answers shell completion
  /// requests on the calling thread; hands `odr http` to the
  /// helper before any parsing; returns at once for anything else. Call it
  /// first thing in `odr`'s `main`, before anything has started the
  /// concurrency runtime's threads.
  package static func runHotPath() {
    // The first process of `odr exec --proxy`'s sandbox, before anything
    // of odr's own (its core limit must stay the user's, for the command).
    if CommandLine.arguments.dropFirst().first == "--sandbox-init" { exit(odr_sandbox_init(CommandLine.argc, CommandLine.unsafeArgv)) }
    CoreDumps.disable()
    let arguments = Array(CommandLine.arguments.dropFirst())
    if HTTPHandoff.commands.contains(arguments.first ?? "") { HTTPHandoff.exec(.process()) }
    if arguments == ["--version"] {
      Output.process().write(ODR.configuration.version + "\n")
      exit(0)
    }
    if let quick = QuickGet(arguments: arguments, environment: CommandContext.processEnvironment,
                                workingDirectory: CommandContext.processWorkingDirectory) { quick.run() }
    // A shell's completion request may read the keyring, synchronously
    // (Completions): answer it here, on the main thread, before the
    // concurrency runtime starts. parseAsRoot throws the completions.
    if arguments.first == "---completion" {
      do { _ = try ODR.parseAsRoot() } catch { ODR.exit(withError: error) }
      ODR.exit()
    }
  }
}
