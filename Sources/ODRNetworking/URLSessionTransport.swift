public import Foundation
import FoundationNetworking
import ODRBase
public import ODRCatalog
public import ODRTransports

/// Reads catalogs and blobs over http(s), and `s3://` sources with requests
/// signed as `odr` signs them, through URLSession: the transport apps get,
/// so an app that already links Foundation's networking needs no other
/// HTTP stack. (`odr` itself uses ODRHTTP's transport on its own client; both
/// follow the same rules and report failures in the same words.)
///
/// Catalogs are revalidated with `If-None-Match` / `If-Modified-Since`
/// (URLSession's own cache is off); blob bodies reach the sink chunk by
/// chunk as they arrive, through a buffer without backpressure (URLSession
/// has none to give): memory grows only while the network outpaces the
/// sink, which suits key packs; servers that download large packs should
/// use ODRHTTP's `HTTPTransport`. Redirects are followed here, between http(s) URLs
/// only and at most five, so a credential goes only to its own origin; S3
/// requests are never redirected. A transfer fails when no byte comes for
/// `NetworkLocation.stall`, and a catalog or signature when it takes more
/// than four times that in all.
public struct URLSessionTransport: BlobTransport {
  let location: NetworkLocation
  /// The role S3 requests are signed as (a web identity, no fixed credentials).
  let role: AWSCredentialChain?

  /// A transport for `location`: its credential, S3 access and stall time.
  public init(_ location: NetworkLocation) {
    self.location = location
    role = location.s3?.roleChain(http: URLSessionTransport(NetworkLocation(url: location.url, stall: location.stall)))
  }

  public func data(at url: URL, limit: Int) async throws -> Data {
    try HTTPDocument.data(of: try await document(at: url, limit: limit, unless: nil), url: url)
  }

  public func document(at url: URL, limit: Int, unless validators: CacheValidators?) async throws -> FetchedDocument {
    try await HTTPDocument.within(location.stall * 4, url: url) {
      var headers: [(String, String)] = []
      if let etag = validators?.etag { headers.append(("If-None-Match", etag)) }
      if let date = validators?.lastModified { headers.append(("If-Modified-Since", date)) }
      var data = Data()
      var validators = CacheValidators()
      let fetched = try await send(url, headers: headers) { response in
        if response.statusCode == 304 { return false }
        validators = Self.validators(of: response)
        return true
      } into: { chunk in
        guard data.count + chunk.count <= limit else {
          throw ResourceError(.integrity, "\(url.redacted) is larger than \(limit) bytes; refusing it.")
        }
        data.append(contentsOf: chunk)
      }
      return fetched ? .fetched(data, validators) : .notModified
    }
  }

  public func stream(_ url: URL, into sink: (UnsafeRawBufferPointer) throws -> Void) async throws {
    try await stream(url, resume: nil, start: { _, _ in }, into: sink)
  }

  public func stream(_ url: URL, resume: ResumePoint?, start: (Int64, CacheValidators) throws -> Void,
                     into sink: (UnsafeRawBufferPointer) throws -> Void) async throws {
    let headers = ResumePoint.headers(for: resume)
    var restart = false
    _ = try await send(url, headers: headers) { response in
      if response.statusCode == 416, !headers.isEmpty { restart = true; return false }
      var offset: Int64 = 0
      if response.statusCode == 206 {
        // Only the range asked for is accepted; anything else starts over.
        guard let resume, resume.matches(contentRange: response.value(forHTTPHeaderField: "Content-Range")) else {
          restart = true
          return false
        }
        offset = resume.offset
      }
      try start(offset, Self.validators(of: response))
      return true
    } into: { chunk in
      try chunk.withUnsafeBytes { try sink($0) }
    }
    if restart { try await stream(url, resume: nil, start: start, into: sink) }
  }

  // MARK: Requests

  /// Sends a GET to `url` (http, https or s3), following up to five
  /// redirects between http(s) URLs with the credential sent only to its
  /// origin. `accept` sees the final response first (a non-2xx other than
  /// 206/304/416 has already thrown): false skips the body. Returns what
  /// `accept` said.
  private func send(_ url: URL, headers: [(String, String)], accept: (HTTPURLResponse) throws -> Bool,
                    into sink: (Data) throws -> Void) async throws -> Bool {
    var target = url
    for _ in 0...5 {
      let address = try self.address(of: target)
      var request = URLRequest(url: address)
      var all = headers
      if let s3 = location.s3, url.scheme == "s3" {
        all = try await s3.headers(method: "GET", url: address, headers: all, payloadHash: SigV4Signer.emptyPayloadHash, role: role)
      } else if let credential = location.credential, credential.applies(to: target) {
        all.append((credential.header, credential.value))
      }
      for (name, value) in all { request.setValue(value, forHTTPHeaderField: name) }
      let exchange = ExchangeSession.single(request, stall: location.stall)
      defer { exchange.cancel() }
      let response: HTTPURLResponse
      do { response = try await exchange.response() } catch {
        throw failure(error, url: target, address: address)
      }
      let status = response.statusCode
      if [301, 302, 303, 307, 308].contains(status), url.scheme != "s3",
         let place = response.value(forHTTPHeaderField: "Location"),
         let next = URL(string: place, relativeTo: target)?.absoluteURL, next.scheme == "http" || next.scheme == "https" {
        target = next
        continue
      }
      if !(200..<300).contains(status), ![304, 416].contains(status) {
        var excerpt = Data()
        // an excerpt for the error message only; the status is the error
        while excerpt.count < 8192, let chunk = await droppingAsync(.messageOnly, { try await exchange.next() }) { excerpt.append(chunk) }
        throw HTTPStatusCheck.failure(status, excerpt: String(decoding: excerpt.prefix(8192), as: UTF8.self), url: target,
                                      credential: HTTPStatusCheck.credentialName(for: url, credential: location.credential, s3: location.s3),
                                      secrets: HTTPStatusCheck.secrets(credential: location.credential, s3: location.s3) + (await role?.knownSecrets() ?? []))
      }
      guard try accept(response) else { return false }
      do {
        while let chunk = try await exchange.next() {
          try Task.checkCancellation()
          try sink(chunk)
        }
      } catch let error as ResourceError {
        throw error
      } catch {
        throw failure(error, url: target, address: address)
      }
      return true
    }
    throw ResourceError(.network, "\(url.redacted) redirects more than five times; the server is misconfigured.")
  }

  /// The http(s) address a request goes to.
  private func address(of url: URL) throws -> URL {
    guard url.scheme == "s3" else { return url }
    guard let s3 = location.s3 else {
      throw ResourceError(.invalidSource, "\(url.redacted): this transport has no S3 access configured.")
    }
    return s3.httpURL(for: url)
  }

  private static func validators(of response: HTTPURLResponse) -> CacheValidators {
    CacheValidators(etag: response.value(forHTTPHeaderField: "ETag"), lastModified: response.value(forHTTPHeaderField: "Last-Modified"))
  }

  /// A transport error in plain words.
  func failure(_ error: any Error, url: URL, address: URL) -> any Error {
    if error is CancellationError || Task.isCancelled { return CancellationError() }
    if let error = error as? ResourceError { return error }
    let place = "\(address.host ?? "?"):\(address.port ?? (address.scheme == "https" ? 443 : 80))"
    let reason: String
    switch (error as? URLError)?.code {
    case .timedOut?: reason = "\(url.redacted) stalled: no data for \(location.stall)"
    case .cannotConnectToHost?: reason = "cannot connect to \(place): connection refused (is the server running?)"
    case .networkConnectionLost?: reason = "\(place) closed the connection mid-transfer"
    case .cannotFindHost?, .dnsLookupFailed?: reason = "cannot find the host \(address.host ?? "?")"
    case .secureConnectionFailed?, .serverCertificateUntrusted?, .serverCertificateHasBadDate?, .serverCertificateNotYetValid?,
         .serverCertificateHasUnknownRoot?, .clientCertificateRejected?:
      reason = "the TLS handshake with \(place) failed: it may not serve HTTPS on that port (try http://), or its certificate is not trusted here"
    default: reason = "downloading \(url.redacted) failed: \(String(describing: error).prefix(200))"
    }
    return ResourceError(.network, "\(reason.prefix(1).uppercased() + reason.dropFirst()); nothing was installed. Check the connection and the URL, then try again.",
                         underlying: error)
  }
}
