public import FoundationEssentials
public import ODRConfiguration
public import ODRResources
public import ODRTransports

/// Loading the catalog a configuration names: the wiring of the resources
/// to the reader (ODRConfiguration only reads odr.json and `ODR_*`).
///
/// ```swift
/// let configuration = try ODRConfiguration.discover(folder: URL(filePath: "/srv/demo"))
/// let catalog = try await configuration.loadCatalog(transport: try await configuration.transport { location in
///   URLSessionTransport(location)
/// })
/// ```
extension ODRConfiguration {
  /// How the catalog is read: files directly, each network location through
  /// the transport `network` makes for it (with this configuration's S3
  /// access and catalog token), several locations as mirrors tried in
  /// order (`notice` hears when one is skipped).
  public func transport(notice: @escaping @Sendable (String) -> Void = { _ in },
                        network: (NetworkLocation) throws -> any BlobTransport) async throws -> any BlobTransport {
    try await MirrorTransport.reading(try requireLocations(), notice: notice) { try network(try await networkLocation($0)) }
  }

  /// The catalog, admitted under `trust` and read through `transport`
  /// (from ``transport(notice:network:)``), with its store's budget set.
  public func loadCatalog(transport: any BlobTransport, cacheHome: URL? = nil) async throws -> ResourceCatalog {
    var catalog = try await ResourceCatalog.load(from: try requireLocations()[0], cacheHome: cacheHome ?? folders.cacheHome,
                                                 transport: transport, trust: trust)
    catalog.budget = maxSize
    return catalog
  }
}
