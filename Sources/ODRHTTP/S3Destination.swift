package import FoundationEssentials
import ODRBase
import Crypto
import NIOCore
import NIOHTTP1
import ODRCatalog
package import ODRTransports
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
package struct S3Destination: Sendable {
  package let location: URL
  let transport: HTTPTransport

  /// `location` is `s3://bucket/prefix`; `access` says how to reach it.
  package init(_ location: URL, access: S3Access, timeouts: HTTPTransport.Timeouts = .init()) {
    self.location = location
    var transport = HTTPTransport(timeouts: timeouts, s3: access)
    transport.purpose = .publishing
    self.transport = transport
  }

  package var name: String { location.redacted }

  private func url(_ path: String) -> URL {
    let base = location.absoluteString.hasSuffix("/") ? location.absoluteString : location.absoluteString + "/"
    return URL(string: base + path)!
  }

  package func size(of path: String) async throws -> Int64? {
    let response = try await transport.send("HEAD", url(path))
    if response.status == .notFound { return nil }
    try await transport.check(response, url: url(path))
    return response.headers.first(name: "content-length").flatMap { Int64($0) }
  }

  package func read(_ path: String, limit: Int) async throws -> Data? {
    try await transport.dataIfPresent(at: url(path), limit: limit)
  }

  package func upload(_ file: URL, sha256: String, to path: String, cacheControl: String) async throws {
    var info = stat()
    guard stat(file.path, &info) == 0 else { throw ResourceError(.io, "Cannot read '\(file.path)'.") }
    let size = Int64(info.st_size)
    try await put(.file(file, size: size, sha256: sha256), to: path, cacheControl: cacheControl)
  }

  package func upload(_ data: Data, to path: String, cacheControl: String) async throws {
    try await put(.data(data, sha256: SigV4Signer.payloadHash(data)), to: path, cacheControl: cacheControl)
  }

  private func put(_ body: HTTPTransport.RequestBody, to path: String, cacheControl: String) async throws {
    let type = path.hasSuffix(".json") ? "application/json" : "application/octet-stream"
    let response = try await transport.send("PUT", url(path), headers: [("Cache-Control", cacheControl), ("Content-Type", type)], body: body)
    try await transport.check(response, url: url(path))
  }

  /// Lists `prefix/blobs/` with ListObjectsV2, page after page (at most
  /// 10,000 pages of 1,000 keys), asking by the first segment of the
  /// prefix and keeping the keys under `prefix/blobs/`.
  package func blobs() async throws -> [String] {
    let prefix = location.path(percentEncoded: false).drop { $0 == "/" }
    let blobs = (prefix.isEmpty || prefix.hasSuffix("/") ? String(prefix) : prefix + "/") + "blobs/"
    // RFC 3986's unreserved characters as they are, every other byte %XX:
    // the query as SigV4 signs it.
    func encoded(_ text: String) -> String {
      text.utf8.map { byte in
        let unreserved = (0x30...0x39).contains(byte) || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte) || [0x2d, 0x2e, 0x5f, 0x7e].contains(byte)
        return unreserved ? String(UnicodeScalar(byte)) : "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
      }.joined()
    }
    var names: [String] = []
    var token: String?
    for _ in 0..<10_000 {
      // Asked by the key's first segment (no '/'), filtered below: a '/' in
      // the query is signed as %2F by the spec, and moto 5.2 checks it
      // decoded (its own boto3 fails a signed listing by "odr/blobs/").
      var query = "list-type=2&prefix=\(encoded(String(blobs.prefix { $0 != "/" })))"
      if let token { query += "&continuation-token=\(encoded(token))" }
      let listing = URL(string: "s3://\(location.host ?? "")?\(query)")!  // no "/": the bucket itself, as boto asks
      let response = try await transport.send("GET", listing)
      try await transport.check(response, url: listing)
      let body = try await response.body.collect(upTo: S3ListingPage.maxBytes)
      let page: S3ListingPage
      do { page = try S3ListingPage(Array(buffer: body)) } catch {
        throw ResourceError(.network, "\(location.redacted) answered the listing of its blobs with something odr cannot read (\(error.reason)); nothing was deleted.")
      }
      names += page.keys.compactMap { key in key.hasPrefix(blobs) && Naming.isSHA256Hex(String(key.dropFirst(blobs.count))) ? String(key.dropFirst(blobs.count)) : nil }
      guard let next = page.next else { return names.sorted() }
      token = next
    }
    throw ResourceError(.network, "\(location.redacted) listed more than 10,000 pages of blobs; nothing was deleted.")
  }

  package func delete(_ path: String) async throws {
    let response = try await transport.send("DELETE", url(path))
    if response.status == .notFound { return }
    try await transport.check(response, url: url(path))
  }
}
