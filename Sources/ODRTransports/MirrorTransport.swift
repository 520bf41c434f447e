public import FoundationEssentials
import ODRBase
public import ODRCatalog
import Synchronization

/// Several copies of one published catalog, tried in order (docs/hosting.md).
///
/// Requests name URLs under the first mirror; each goes to the first mirror
/// still in service, rewritten to its folder. A mirror that fails — cannot
/// be reached, times out, answers 5xx or 404, or serves bytes whose hash is
/// wrong — is skipped for the rest of the run, and the request moves on to
/// the next. Mirrors are untrusted: the catalog's signature and every
/// blob's SHA-256 are checked whichever one served them.
public final class MirrorTransport: BlobTransport {
  /// One mirror: the folder its catalog.json is in, and how to read it.
  public struct Mirror: Sendable {
    public let folder: URL
    public let transport: any BlobTransport

    public init(folder: URL, transport: any BlobTransport) {
      self.folder = folder
      self.transport = transport
    }
  }

  private struct State {
    package var skipped = Set<Int>()
    /// Which mirror each URL was last asked of (to skip it when its bytes were bad).
    package var servedBy: [URL: Int] = [:]
  }

  private let mirrors: [Mirror]
  private let state = Mutex(State())
  /// Told once for each mirror skipped, with the reason.
  private let notice: @Sendable (String) -> Void

  /// Mirrors in the order they are tried. `notice` hears one line for each
  /// mirror taken out of service.
  /// How a catalog at `locations` (at least one) is read: files directly,
  /// each network location through the transport `network` makes for it,
  /// several locations as mirrors tried in order (`notice` hears when one
  /// is skipped).
  public static func reading(_ locations: [URL], notice: @escaping @Sendable (String) -> Void = { _ in },
                             network: (URL) async throws -> any BlobTransport) async throws -> any BlobTransport {
    var transports: [any BlobTransport] = []
    for url in locations {
      transports.append(url.isFileURL ? FileTransport() : try await network(url))
    }
    guard locations.count > 1 else { return transports[0] }
    let mirrors = zip(locations, transports).map { url, transport in
      let catalogURL = url.pathExtension == "json" ? url : url.appending(path: "catalog.json")
      return Mirror(folder: catalogURL.deletingLastPathComponent(), transport: transport)
    }
    return MirrorTransport(mirrors, notice: notice)
  }

  public init(_ mirrors: [Mirror], notice: @escaping @Sendable (String) -> Void = { _ in }) {
    precondition(!mirrors.isEmpty, "a mirror set needs a mirror")
    self.mirrors = mirrors
    self.notice = notice
  }

  public func data(at url: URL, limit: Int) async throws -> Data {
    try await attempt(url) { try await $0.transport.data(at: $1, limit: limit) }
  }

  public func dataIfPresent(at url: URL, limit: Int) async throws -> Data? {
    try await attempt(url) { try await $0.transport.dataIfPresent(at: $1, limit: limit) }
  }

  public func document(at url: URL, limit: Int, unless validators: CacheValidators?) async throws -> FetchedDocument {
    try await attempt(url) { try await $0.transport.document(at: $1, limit: limit, unless: validators) }
  }

  public func stream(_ url: URL, into sink: (UnsafeRawBufferPointer) throws -> Void) async throws {
    try await stream(url, resume: nil, start: { _, _ in }, into: sink)
  }

  public func stream(_ url: URL, resume: ResumePoint?, start: (Int64, CacheValidators) throws -> Void,
                     into sink: (UnsafeRawBufferPointer) throws -> Void) async throws {
    // After a mirror fails mid-stream, the next one resumes where it stopped
    // (with the failed mirror's validators, so a different copy restarts).
    var point = resume
    try await attempt(url) { mirror, mirrorURL in
      var written: Int64 = 0
      do {
        try await mirror.transport.stream(mirrorURL, resume: point, start: { offset, validators in
          written = offset
          point = ResumePoint(offset: offset, validators: validators)
          try start(offset, validators)
        }) { chunk in
          written += Int64(chunk.count)
          try sink(chunk)
        }
      } catch {
        if let validators = point?.validators { point = ResumePoint(offset: written, validators: validators) }
        throw error
      }
    }
  }

  public func reportDamaged(_ url: URL) async -> Bool {
    let (index, remaining) = state.withLock { state -> (Int?, Bool) in
      guard let index = state.servedBy[url] else { return (nil, false) }
      state.skipped.insert(index)
      return (index, state.skipped.count < mirrors.count)
    }
    if let index { notice("warning: mirror \(mirrors[index].folder.redacted) served a damaged \(url.lastPathComponent); skipping it for the rest of this run.") }
    return remaining
  }

  /// Runs `body` against each mirror in service until one succeeds.
  private func attempt<T>(_ url: URL, _ body: (Mirror, URL) async throws -> T) async throws -> T {
    let base = mirrors[0].folder.absoluteString
    let relative = url.absoluteString.hasPrefix(base) ? String(url.absoluteString.dropFirst(base.count)) : nil
    var lastError: (any Error)?
    for (index, mirror) in mirrors.enumerated() {
      guard !state.withLock({ $0.skipped.contains(index) }) else { continue }
      guard let relative, let mirrorURL = URL(string: mirror.folder.absoluteString + relative) else {
        return try await body(mirror, url)  // not under the catalog: no mirror copies it
      }
      state.withLock { $0.servedBy[url] = index }
      do {
        return try await body(mirror, mirrorURL)
      } catch let error as ResourceError where error.code == .network || error.code == .notFound {
        state.withLock { _ = $0.skipped.insert(index) }
        if index + 1 < mirrors.count {
          notice("warning: mirror \(mirror.folder.redacted) failed (\(error.message.prefix { $0 != ";" })); using the next one for the rest of this run.")
        }
        lastError = error
      }
    }
    throw lastError ?? ResourceError(.network, "Every mirror of the catalog failed earlier in this run; nothing was downloaded. Check the sources and try again.")
  }
}
