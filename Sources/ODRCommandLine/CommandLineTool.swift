public import ODRResources

/// The entry point of the `odr` and `odr-net` executables.
public enum CommandLineTool {
  /// Runs `odr` with the process's arguments and exits with its code.
  /// `network` makes the transport for http(s) catalogs (nil: hand such
  /// commands to `odr-net`).
  public static func main(network: (@Sendable () -> any BlobTransport)?) async {
    await ODR.main(network: network)
  }
}
