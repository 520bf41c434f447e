public import FoundationEssentials
import ODRBase
import AsyncHTTPClient
import Crypto
import NIOHTTP1
import ODRCatalog
public import ODRTransports
public import ODRPublishing
#if canImport(Glibc)
import Glibc
#endif

/// An `s3://bucket/prefix` destination for `odr publish`: objects are
/// written with signed single `PUT`s (atomic in S3: readers see the old
/// object or the new one) carrying `Cache-Control`.
///
/// Each object is sent in one request, streamed from disk (a blob) or from
/// memory (the small catalog files), signed with its SHA-256, which S3
/// checks; an object may be at most 5 GiB (S3's limit for a single PUT).
public struct S3Destination: PublishDestination {
  public let location: URL
  let transport: HTTPTransport

  /// `location` is `s3://bucket/prefix`; `access` says how to reach it.
  public init(_ location: URL, access: S3Access, timeouts: HTTPTransport.Timeouts = .init()) {
    self.location = location
    transport = HTTPTransport(timeouts: timeouts, s3: access)
  }

  public var name: String { location.redacted }

  private func url(_ path: String) -> URL {
    let base = location.absoluteString.hasSuffix("/") ? location.absoluteString : location.absoluteString + "/"
    return URL(string: base + path)!
  }

  public func size(of path: String) async throws -> Int64? {
    let response = try await transport.send("HEAD", url(path))
    if response.status == .notFound { return nil }
    try await HTTPTransport.check(response, url: url(path), credential: transport.s3?.credentialName ?? "", secrets: transport.secrets)
    return response.headers.first(name: "content-length").flatMap { Int64($0) }
  }

  public func read(_ path: String, limit: Int) async throws -> Data? {
    try await transport.dataIfPresent(at: url(path), limit: limit)
  }

  public func upload(_ file: URL, sha256: String, to path: String, cacheControl: String) async throws {
    var info = stat()
    guard stat(file.path, &info) == 0 else { throw ResourceError(.io, "Cannot read '\(file.path)'.") }
    let size = Int64(info.st_size)
    try await put(.file(file, size: size, sha256: sha256), to: path, cacheControl: cacheControl)
  }

  public func upload(_ data: Data, to path: String, cacheControl: String) async throws {
    try await put(.data(data, sha256: SigV4Signer.hex(SHA256.hash(data: data))), to: path, cacheControl: cacheControl)
  }

  private func put(_ body: HTTPTransport.RequestBody, to path: String, cacheControl: String) async throws {
    let type = path.hasSuffix(".json") ? "application/json" : "application/octet-stream"
    let response = try await transport.send("PUT", url(path), headers: [("Cache-Control", cacheControl), ("Content-Type", type)], body: body)
    try await HTTPTransport.check(response, url: url(path), credential: transport.s3?.credentialName ?? "", secrets: transport.secrets)
  }

  public func delete(_ path: String) async throws {
    let response = try await transport.send("DELETE", url(path))
    if response.status == .notFound { return }
    try await HTTPTransport.check(response, url: url(path), credential: transport.s3?.credentialName ?? "", secrets: transport.secrets)
  }
}
