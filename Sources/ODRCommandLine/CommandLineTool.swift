import ArgumentParser
import CHardening
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
    // Buffers of 128 KiB and more (transfers stream in 256 KiB chunks) are
    // mapped and unmapped one by one. glibc's adaptive threshold would move
    // them onto the heap, where chunks freed on the event loop's thread
    // fragment it: a 1 GiB upload peaked at 83 MiB RSS instead of ~40.
    _ = odr_map_large_buffers()
    await ODR.main(http: http)
  }

  /// Runs the hot paths, `odr get NAME` and `odr --version`, on the calling
  /// thread without ArgumentParser, and exits; answers shell completion
  /// requests on the calling thread; hands `odr http` to the
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
    // A shell's completion request may read the keyring, synchronously
    // (Completions): answer it here, on the main thread, before the
    // concurrency runtime starts. parseAsRoot throws the completions.
    if arguments.first == "---completion" {
      do { _ = try ODR.parseAsRoot() } catch { ODR.exit(withError: error) }
      ODR.exit()
    }
  }
}
