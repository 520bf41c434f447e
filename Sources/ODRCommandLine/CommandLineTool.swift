import ODRResources

/// The entry point of the `odr` and `odr-net` executables.
public enum CommandLineTool {
  /// Runs `odr` with the process's arguments and exits with its code.
  /// `network` does what needs the HTTP stacks (nil: hand such commands to
  /// `odr-net`).
  package static func main(network: (any NetworkCommands)?) async {
    await ODR.main(network: network)
  }
}
