#if canImport(Glibc)
import Glibc
#endif

@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
  _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
  _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

/// libFuzzer's driver run from a fuzz target's own main (SwiftPM gives an
/// executable target's main a name of its own, so libFuzzer's main cannot
/// be the entry). Only in the `-sanitize=fuzzer` build (scripts/checks/fuzz).
public enum FuzzDriver {
  /// Runs libFuzzer with this process's arguments, feeding each input to
  /// `callback`, and exits with its status.
  public static func run(_ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, callback))
  }
}
