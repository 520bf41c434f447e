import ODRBase
public import FoundationEssentials
import ODRCatalog

/// The transport of `--offline`: it refuses every read, so only what is
/// already in the local store can be served.
public struct OfflineTransport: BlobTransport {
  public init() {}

  public func data(at url: URL, limit: Int) async throws -> Data {
    throw refusal
  }

  public func stream(_ url: URL, into sink: (UnsafeRawBufferPointer) throws -> Void) async throws {
    throw refusal
  }

  private var refusal: ResourceError {
    ResourceError(.network, "Offline: this needs a download and --offline forbids it. The tags on disk are in `odr status`; run without --offline to fetch the rest.")
  }
}
