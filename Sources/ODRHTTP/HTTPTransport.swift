public import FoundationEssentials
import NIOCore
import NIOHTTP1
import ODRBase
public import ODRCatalog
public import ODRTransports
import Synchronization

/// Fetches catalogs and blobs over HTTP(S), and from `s3://` sources with
/// requests signed by `SigV4Signer`, with odr's HTTP client (``HTTP1Client``).
///
/// Blob bodies reach the store chunk by chunk as they arrive and never touch
/// a temporary file; memory stays bounded whatever the size (the response
/// body is an async sequence with backpressure). Catalogs are revalidated
/// with `If-None-Match` / `If-Modified-Since`; interrupted blobs resume with
/// `Range` + `If-Range`.
///
/// Failing fast: a refused connection is not retried (it fails in
/// milliseconds), connecting has its own timeout (5 s) and so has a stalled
/// transfer (15 s without a byte). Redirects are followed here, not by the
/// client, so a credential goes only to its own origin. Every failure
/// becomes a `ResourceError` in plain words: `.network` (unreachable,
/// timeout, 5xx, TLS), `.notFound` (404) or `.accessDenied` (401/403, S3
/// AccessDenied/SignatureDoesNotMatch, naming the credential used).
///
/// https hosts are checked against the system's CA bundle, or the file
/// `SSL_CERT_FILE` names.
///
/// Kept out of ODRResources so that programs which never download do not
/// carry an HTTP stack.
public struct HTTPTransport: BlobTransport {
  /// How long each phase may take.
  public struct Timeouts: Sendable, Hashable {
    /// Establishing the connection (and TLS).
    public var connect: Duration
    /// The longest wait for the next bytes of a response.
    public var stall: Duration

    /// The longest a whole catalog or signature transfer may take, however
    /// steadily its bytes trickle in (a host sending one byte every few
    /// seconds never stalls).
    public var document: Duration

    public init(connect: Duration = .seconds(5), stall: Duration = .seconds(15), document: Duration? = nil) {
      self.connect = connect
      self.stall = stall
      self.document = document ?? stall * 4
    }
  }

  public let timeouts: Timeouts
  let credential: HTTPCredential?
  let s3: S3Access?
  /// The role S3 requests are signed as, when the job has a web identity
  /// and no fixed credentials; STS is asked once, through this transport's client.
  let role: AWSCredentialChain?
  /// Whose words failures are said in (`S3Destination`: publishing).
  var purpose = HTTPStatusCheck.Purpose.reading

  /// A transport for http(s) URLs (with `credential` sent to its origin
  /// only) and, given `s3`, for `s3://` URLs.
  public init(timeouts: Timeouts = Timeouts(), credential: HTTPCredential? = nil, s3: S3Access? = nil) {
    self.timeouts = timeouts
    self.credential = credential
    self.s3 = s3
    role = s3?.roleChain(http: HTTPTransport(timeouts: timeouts))
  }

  /// A transport for `location`: its credential, S3 access and stall time.
  public init(_ location: NetworkLocation) {
    self.init(timeouts: Timeouts(stall: location.stall), credential: location.credential, s3: location.s3)
  }

  public func data(at url: URL, limit: Int) async throws -> Data {
    try HTTPDocument.data(of: try await document(at: url, limit: limit, unless: nil), url: url)
  }

  public func document(at url: URL, limit: Int, unless validators: CacheValidators?) async throws -> FetchedDocument {
    try await HTTPDocument.within(timeouts.document, url: url) { try await documentNow(at: url, limit: limit, unless: validators) }
  }

  private func documentNow(at url: URL, limit: Int, unless validators: CacheValidators?) async throws -> FetchedDocument {
    var headers: [(String, String)] = []
    if let etag = validators?.etag { headers.append(("If-None-Match", etag)) }
    if let date = validators?.lastModified { headers.append(("If-Modified-Since", date)) }
    let response = try await send("GET", url, headers: headers)
    if response.status == .notModified { return .notModified }
    try await check(response, url: url)
    var data = Data()
    try await Self.receive(response, url: url) { chunk in
      guard data.count + chunk.count <= limit else {
        throw ResourceError(.integrity, "\(url.redacted) is larger than \(limit) bytes; refusing it.")
      }
      data.append(contentsOf: chunk)
    }
    return .fetched(data, Self.validators(of: response))
  }

  public func stream(_ url: URL, into sink: (UnsafeRawBufferPointer) throws -> Void) async throws {
    try await stream(url, resume: nil, start: { _, _ in }, into: sink)
  }

  public func stream(_ url: URL, resume: ResumePoint?, start: (Int64, CacheValidators) throws -> Void,
                     into sink: (UnsafeRawBufferPointer) throws -> Void) async throws {
    let headers = ResumePoint.headers(for: resume)
    let response = try await send("GET", url, headers: headers)
    if response.status == .rangeNotSatisfiable, !headers.isEmpty {
      return try await stream(url, resume: nil, start: start, into: sink)
    }
    try await check(response, url: url)
    var offset: Int64 = 0
    if response.status == .partialContent {
      // Only the range asked for is accepted; anything else starts over.
      guard let resume, resume.matches(contentRange: response.headers.first(name: "content-range")) else {
        return try await stream(url, resume: nil, start: start, into: sink)
      }
      offset = resume.offset
    }
    try start(offset, Self.validators(of: response))
    try await Self.receive(response, url: url, into: sink)
  }

  // MARK: Requests

  /// What a request sends, with the hex SHA-256 S3 signs: bytes in memory,
  /// or a file streamed from disk (its hash known beforehand, as a blob's
  /// name is its hash, and checked by S3 on arrival).
  enum RequestBody {
    case data(Data, sha256: String)
    case file(URL, size: Int64, sha256: String)

    var size: Int64 {
      switch self {
      case .data(let data, _): Int64(data.count)
      case .file(_, let size, _): size
      }
    }

    var sha256: String {
      switch self {
      case .data(_, let sha256), .file(_, _, let sha256): sha256
      }
    }
  }

  /// Sends a request to `url` (http, https or s3), following up to five
  /// redirects between http(s) URLs. The credential goes only to its
  /// origin, at every hop; S3 requests are signed and never redirected.
  func send(_ method: String, _ url: URL, headers: [(String, String)] = [], body: RequestBody? = nil) async throws -> HTTP1Response {
    var target = url
    for _ in 0...5 {
      var all = headers
      if let s3, url.scheme == "s3" {
        let address = s3.httpURL(for: target)
        all = try await s3.headers(method: method, url: address, headers: all, payloadHash: body?.sha256 ?? SigV4Signer.emptyPayloadHash, role: role)
      } else if let credential, credential.applies(to: target) {
        all.append((credential.header, credential.value))
      }
      let request = try Self.request(method, try address(of: target), headers: all.filter { $0.0.lowercased() != "content-length" }, body: body)
      let response: HTTP1Response
      do {
        response = try await Self.client(for: timeouts).execute(request)
      } catch {
        if Task.isCancelled || error is CancellationError { throw CancellationError() }
        throw Self.failure(error, url: target, address: try address(of: target), timeouts: timeouts, purpose: purpose)
      }
      guard [301, 302, 303, 307, 308].contains(response.status.code), url.scheme != "s3",
            let location = response.headers.first(name: "location"),
            let next = URL(string: location, relativeTo: target)?.absoluteURL, next.scheme == "http" || next.scheme == "https" else {
        return response
      }
      target = next
    }
    throw ResourceError(.network, "\(url.redacted) redirects more than five times; the server is misconfigured.")
  }

  /// The request for `method` to the http(s) `address`.
  static func request(_ method: String, _ address: URL, headers: [(String, String)], body: RequestBody?) throws -> HTTP1Request {
    guard let scheme = address.scheme?.lowercased(), scheme == "http" || scheme == "https",
          var host = address.host(percentEncoded: false), !host.isEmpty else {
      throw ResourceError(.invalidSource, "\(address.redacted) is not an http(s) URL.")
    }
    if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    var target = address.path(percentEncoded: true)
    if target.isEmpty { target = "/" }
    if let query = address.query(percentEncoded: true) { target += "?" + query }
    let requestBody: HTTP1Request.Body? = switch body {
    case .data(let data, _)?: .bytes(ByteBuffer(bytes: data))
    case .file(let file, let size, _)?: .file(path: file.path, length: size)
    case nil: nil
    }
    return HTTP1Request(method: HTTPMethod(rawValue: method), scheme: scheme, host: host, port: address.port ?? (scheme == "https" ? 443 : 80),
                        target: target, headers: HTTPHeaders(headers), body: requestBody)
  }

  /// The http(s) address a request goes to.
  private func address(of url: URL) throws -> URL {
    guard url.scheme == "s3" else { return url }
    guard let s3 else {
      throw ResourceError(.invalidSource, "\(url.redacted): this transport has no S3 access configured.")
    }
    return s3.httpURL(for: url)
  }

  var secrets: [String] { HTTPStatusCheck.secrets(credential: credential, s3: s3) }

  private func credentialName(for url: URL) -> String {
    HTTPStatusCheck.credentialName(for: url, credential: credential, s3: s3)
  }

  /// One client per timeout setting, for the life of the process.
  private static let clients = Mutex<[Timeouts: HTTP1Client]>([:])

  /// The certificates https hosts are checked against: `SSL_CERT_FILE`
  /// when set (a private CA, as curl and OpenSSL read it), else the
  /// system's bundle.
  static var trustRoots: String? {
    ProcessInfo.processInfo.environment["SSL_CERT_FILE"].flatMap { $0.isEmpty ? nil : $0 }
  }

  static func client(for timeouts: Timeouts) -> HTTP1Client {
    clients.withLock { clients in
      if let client = clients[timeouts] { return client }
      let client = HTTP1Client(configuration: .init(connect: TimeAmount(timeouts.connect), stall: TimeAmount(timeouts.stall), trustRoots: trustRoots))
      clients[timeouts] = client
      return client
    }
  }

  // MARK: Responses

  static func validators(of response: HTTP1Response) -> CacheValidators {
    CacheValidators(etag: response.headers.first(name: "etag"), lastModified: response.headers.first(name: "last-modified"))
  }

  /// Streams the body into `sink`; a dropped connection is a `.network` error.
  static func receive(_ response: HTTP1Response, url: URL, into sink: (UnsafeRawBufferPointer) throws -> Void) async throws {
    do {
      for try await buffer in response.body {
        try Task.checkCancellation()
        try buffer.withUnsafeReadableBytes { try sink($0) }
      }
    } catch let error as ResourceError {
      throw error
    } catch {
      if Task.isCancelled || error is CancellationError { throw CancellationError() }
      throw failure(error, url: url, address: url, timeouts: nil)
    }
  }

  /// Throws the error a non-2xx status means, in plain words
  /// (``HTTPStatusCheck``, with the credential the request to `url`
  /// carried and this transport's purpose).
  func check(_ response: HTTP1Response, url: URL) async throws {
    let code = Int(response.status.code)
    guard !(200..<300).contains(code) else { return }
    var excerpt = ""
    // an excerpt for the error message only; the status is the error
    if let body = await droppingAsync(.messageOnly, { try await response.body.collect(upTo: 8192) }) { excerpt = String(buffer: body) }
    // the role's temporary credentials too, once it has them
    let known = await role?.knownSecrets() ?? []
    throw HTTPStatusCheck.failure(code, excerpt: excerpt, url: url, credential: credentialName(for: url), secrets: secrets + known, purpose: purpose)
  }

  /// A transport error in plain words.
  static func failure(_ error: any Error, url: URL, address: URL, timeouts: Timeouts?, purpose: HTTPStatusCheck.Purpose = .reading) -> ResourceError {
    let place = "\(address.host ?? "?"):\(address.port ?? (address.scheme == "https" ? 443 : 80))"
    let reason = switch TransportFailure(error) {
    case .unknownHost(let host):
      "the host \(host) does not resolve (DNS knows no such name)" + (url.scheme == "s3" ? "; check the S3 endpoint (AWS_ENDPOINT_URL, or \"endpoint\" in odr.json)" : "")
    case .connectTimeout: "connecting to \(place) timed out\(timeouts.map { " after \($0.connect)" } ?? "")"
    case .stalled: "\(url.redacted) stalled: no data for \(timeouts.map { "\($0.stall)" } ?? "too long")"
    case .closed: "\(place) closed the connection mid-transfer"
    case .refused: "cannot connect to \(place): connection refused (is the server running?)"
    case .tls: "the TLS handshake with \(place) failed: it may not serve HTTPS on that port (try http://), or its certificate is not trusted here"
    case .reset: "\(place) reset the connection"
    case .other: "\(purpose == .reading ? "downloading" : purpose == .calling ? "calling" : "sending") \(url.redacted) failed: \(String(describing: error).prefix(200))"
    }
    let advice = purpose == .publishing ? "Check the connection and the destination" : "Check the connection and the URL, then try again"
    return ResourceError(.network, "\(reason.prefix(1).uppercased() + reason.dropFirst()); \(purpose.consequence(advice)).",
                         underlying: error)
  }
}
