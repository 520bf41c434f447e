import ArgumentParser
import ODRCI
import ODRResources
#if canImport(Glibc)
import Glibc
#endif

/// The entry point of the `odr` and `odr-http` executables.
public enum CommandLineTool {
  /// Runs `odr` with the process's arguments and exits with its code.
  /// `http` runs `odr http` (nil: hand it to the helper, `odr-http`).
  package static func main(http: (any HTTPRunner)?) async {
    CoreDumps.disable()  // again in odr (runHotPath did first): a no-op
    await ODR.main(http: http)
  }

  /// Runs the hot paths, `odr get NAME` and `odr --version`, on the calling
  /// thread without ArgumentParser, and exits; hands `odr http` to the
  /// helper before any parsing; returns at once for anything else. Call it
  /// first thing in `odr`'s `main`, before anything has started the
  /// concurrency runtime's threads.
  package static func runHotPath() {
    CoreDumps.disable()
    let arguments = Array(CommandLine.arguments.dropFirst())
    if HTTPHandoff.commands.contains(arguments.first ?? "") { HTTPHandoff.exec() }
    if arguments == ["--version"] {
      Output.write(ODR.configuration.version + "\n")
      exit(0)
    }
    if let quick = QuickGet(arguments: arguments) { quick.run() }
  }
}
