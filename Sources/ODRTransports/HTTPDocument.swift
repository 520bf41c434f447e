package import FoundationEssentials
import ODRBase
package import ODRCatalog

/// What both HTTP transports do alike with a catalog or signature transfer:
/// bound its total time, and refuse a 304 to an unconditional request.
package enum HTTPDocument {
  /// `body`'s document (or an API call's answer), or a `.network` error
  /// once `deadline` has passed (a host sending one byte every few seconds
  /// never stalls).
  package static func within<T: Sendable>(_ deadline: Duration, url: URL,
                                          _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
      group.addTask { try await body() }
      group.addTask {
        try await Task.sleep(for: deadline)
        return nil
      }
      defer { group.cancelAll() }
      guard let document = try await group.next() ?? nil else {
        throw ResourceError(.network, "\(url.redacted) took more than \(deadline) in all (the server sends too slowly, or is stalling on purpose); nothing was changed. Try again, or another mirror.")
      }
      return document
    }
  }

  /// The bytes of an unconditional request's answer.
  package static func data(of document: FetchedDocument, url: URL) throws -> Data {
    guard case .fetched(let data, _) = document else {
      throw ResourceError(.network, "\(url.redacted) answered 304 Not Modified to an unconditional request; the server is misbehaving.")
    }
    return data
  }
}
