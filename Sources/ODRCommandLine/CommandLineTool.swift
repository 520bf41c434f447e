import ArgumentParser
import ODRCI
import ODRResources
#if canImport(Glibc)
import Glibc
#endif

/// The entry point of the `odr` and `odr-net` executables.
public enum CommandLineTool {
  /// Runs `odr` with the process's arguments and exits with its code.
  /// `network` does what needs the HTTP stacks (nil: hand such commands to
  /// `odr-net`).
  package static func main(network: (any NetworkCommands)?) async {
    CoreDumps.disable()  // again in the lean odr (runHotPath did first): a no-op
    await ODR.main(network: network)
  }

  /// Runs the hot paths, `odr get NAME` and `odr --version`, on the calling
  /// thread without ArgumentParser, and exits; returns at once for anything
  /// else. Call it first thing in `main`, before anything has started the
  /// concurrency runtime's threads.
  package static func runHotPath() {
    CoreDumps.disable()
    let arguments = Array(CommandLine.arguments.dropFirst())
    if arguments == ["--version"] {
      Output.write(ODR.configuration.version + "\n")
      exit(0)
    }
    if let quick = QuickGet(arguments: arguments) { quick.run() }
  }
}
