public import Foundation
import FoundationNetworking
import ODRBase
public import Logging
public import ODRKeyFormat
public import ODRURL

/// An HTTP client for apps and CI smoke tests, over `URLSession`, in the
/// spirit of kean/Get, that attaches API keys safely (docs/hosting.md and docs/design.md).
///
/// - Every URL string goes through a `URLPolicy` (`.consistent` by
///   default), redirect targets included.
/// - A key is attached as its metadata says — a header (with an optional
///   scheme such as `Bearer`) or a query parameter — and only when the
///   request's host is one of the key's `hosts`. A request to another host,
///   or a redirect to one, goes without it. Redirects are followed by the
///   client itself (at most 5), so this holds at every hop.
/// - The caller's `Authorization`, `Cookie` and `Proxy-Authorization`
///   headers go only to the origin the request was made to: a redirect to
///   another scheme, host or port goes without them (as curl does).
/// - Key values are redacted from every error, description and log line.
/// - Idempotent requests are retried on transient failures as ``RetryPolicy``
///   says; task cancellation and the timeout are honoured.
///
/// Its state is immutable, so ``send(_:)`` is `nonisolated`: concurrent
/// requests neither queue behind one another nor hop to the actor's
/// executor. State that changes (a token refresh, say) belongs in the actor.
///
/// ```swift
/// let client = try APIClient(baseURL: "https://api.weather.example", provider: provider)
/// let forecast = try await client.send(APIRequest<Forecast>(path: "/v1/forecast", key: "Weather")).value
/// ```
public actor APIClient {
  /// Finds a key by name (with its metadata).
  public typealias KeyLookup = @Sendable (String) async throws -> APIKey

  private let baseURL: String?
  private let policy: URLPolicy
  private let keys: KeyLookup?
  private let retry: RetryPolicy
  private let timeout: Duration
  private let logger: Logger
  private let maxBodyBytes: Int
  private let exchanges: ExchangeSession
  static let maxRedirects = 5
  /// The default of ``init(baseURL:policy:keys:retry:timeout:maxBodyBytes:logger:)``'s
  /// `maxBodyBytes`: 16 MiB.
  public static let defaultMaxBodyBytes = 16 << 20

  /// A client. `baseURL` (checked by `policy`) prefixes relative paths;
  /// `keys` finds the keys requests name; `timeout` bounds each attempt.
  /// ``send(_:)`` keeps at most `maxBodyBytes` of a body in memory, as
  /// decoded (a small gzip body can decode to gigabytes), and throws
  /// `APIError.Code.tooLarge` past it; ``stream(_:head:body:)`` has no cap.
  public init(baseURL: String? = nil, policy: URLPolicy = .consistent, keys: KeyLookup? = nil, retry: RetryPolicy = .default,
              timeout: Duration = .seconds(30), maxBodyBytes: Int = APIClient.defaultMaxBodyBytes,
              logger: Logger = Logger(label: "odr.http")) throws(URLPolicyError) {
    if let baseURL { _ = try policy.url(from: baseURL) }
    self.baseURL = baseURL
    self.policy = policy
    self.keys = keys
    self.retry = retry
    self.timeout = timeout
    self.logger = logger
    self.maxBodyBytes = maxBodyBytes
    exchanges = ExchangeSession()
  }

  deinit { exchanges.session.finishTasksAndInvalidate() }

  /// Sends `request`, retrying and following redirects; returns the decoded
  /// 2xx response or throws `APIError` (or `CancellationError`).
  nonisolated public func send<Response>(_ request: APIRequest<Response>) async throws -> APIResponse<Response> {
    try await exchange(request) { exchange, response, finalURL, key, redactor in
      let data = try await Self.body(of: exchange, upTo: maxBodyBytes, method: request.method, url: finalURL, redactor: redactor)
      do {
        // Only a query key can be in the URL.
        let shownURL = key?.metadata.query == nil ? finalURL.absoluteString : redactor.redact(finalURL.absoluteString)
        return APIResponse(value: try request.decode(data), response: response, url: shownURL)
      } catch {
        throw APIError(.decoding, "The response of \(request.method) \(redactor.redact(finalURL.absoluteString)) could not be decoded as \(Response.self): \(redactor.redact(String(describing: error)))")
      }
    }
  }

  /// Sends `request` as ``send(_:)`` does, but hands a 2xx body to `body`
  /// chunk by chunk as it arrives, after `head` has seen the response:
  /// nothing is kept, so any size passes (`odr http` writes to stdout or
  /// a file this way). Retries happen only before `head` is called; a
  /// connection lost after it throws. Non-2xx answers throw
  /// `APIError.Code.status` with at most `maxBodyBytes` of their body.
  nonisolated public func stream(_ request: APIRequest<Data>, head: (APIResponse<Void>) throws -> Void,
                                 body: (Data) throws -> Void) async throws {
    try await exchange(request) { exchange, response, finalURL, key, redactor in
      let shownURL = key?.metadata.query == nil ? finalURL.absoluteString : redactor.redact(finalURL.absoluteString)
      try head(APIResponse(value: (), response: response, url: shownURL))
      do {
        while let chunk = try await exchange.next() { try body(chunk) }
      } catch let error as URLError {
        throw error.code == .cancelled ? CancellationError() : Self.transportError(error, method: request.method, url: finalURL, redactor: redactor)
      }
    }
  }

  /// Sends `request` as ``send(_:)`` does and writes a 2xx body into
  /// `file` (created or replaced), at any size and in constant memory: the
  /// transfer writes each chunk to disk before it reads the next (URLSession
  /// gives ``stream(_:head:body:)`` no such backpressure). The response
  /// comes once the body is complete. Non-2xx answers throw as in
  /// ``send(_:)``, and leave `file` with their body.
  nonisolated public func download(_ request: APIRequest<Data>, to file: URL) async throws -> APIResponse<Void> {
    try await exchange(request, downloadingTo: file) { _, response, finalURL, key, redactor in
      let shownURL = key?.metadata.query == nil ? finalURL.absoluteString : redactor.redact(finalURL.absoluteString)
      guard FileManager.default.fileExists(atPath: file.path) else {
        throw APIError(.transport, "\(request.method) \(redactor.redact(finalURL.absoluteString)) answered, but its body could not be moved to '\(file.path)'.")
      }
      return APIResponse(value: (), response: response, url: shownURL)
    }
  }

  /// Runs `request` to a 2xx answer, retrying and following redirects, and
  /// hands it to `deliver` (whose URLErrors are retried only if it has not
  /// already thrown an APIError for them). Non-2xx answers throw.
  nonisolated private func exchange<T>(_ request: APIRequest<some Sendable>, downloadingTo file: URL? = nil,
                                       deliver: (Exchange, HTTPURLResponse, URL, APIKey?, Redactor) async throws -> T) async throws -> T {
    for (name, value) in request.headers where Self.breaksHeader(name) || Self.breaksHeader(value) {
      throw APIError(.invalidHeader, "The header '\(Self.breaksHeader(name) ? "(name not shown)" : name)' holds a line break or NUL; a header value is one line. Nothing was sent.")
    }
    var key: APIKey?
    if let name = request.key { key = try await lookUp(name) }
    let redactor = Redactor(key.map { [$0.value] } ?? [])  // what every message is redacted of
    let url = try makeURL(request)
    var attempt = 1
    while true {
      do {
        let (exchange, response, finalURL) = try await perform(request, url: url, key: key, downloadingTo: file)
        defer { exchange.cancel() }
        let status = response.statusCode
        if (200..<300).contains(status) { return try await deliver(exchange, response, finalURL, key, redactor) }
        if request.isIdempotent, attempt < retry.maxAttempts, let wait = retryDelay(status: status, response: response, attempt: attempt) {
          logger.info("retrying after HTTP \(status)", metadata: ["url": "\(redactor.redact(finalURL.absoluteString))", "attempt": "\(attempt)"])
          try await Task.sleep(for: wait)
          attempt += 1
          continue
        }
        let data = try await Self.body(of: exchange, upTo: maxBodyBytes, method: request.method, url: finalURL, redactor: redactor)
        throw Self.statusError(status, data: data, method: request.method, url: finalURL, redactor: redactor)
      } catch let error as URLError where error.code == .cancelled {
        throw CancellationError()
      } catch let error as URLError where request.isIdempotent && attempt < retry.maxAttempts && Self.isTransient(error) {
        logger.info("retrying after a connection failure", metadata: ["error": "\(error.code.rawValue)", "attempt": "\(attempt)"])
        try await Task.sleep(for: retry.backoff(after: attempt))
        attempt += 1
      } catch let error as URLError {
        throw Self.transportError(error, method: request.method, url: url, redactor: redactor)
      }
    }
  }

  /// The rest of `exchange`'s body, at most `limit` bytes of it.
  private static func body(of exchange: Exchange, upTo limit: Int, method: String, url: URL, redactor: Redactor) async throws -> Data {
    var data = Data()
    while let chunk = try await exchange.next(limit: limit) {
      guard data.count + chunk.count <= limit else {
        throw APIError(.tooLarge, "The response of \(method) \(redactor.redact(url.absoluteString)) is larger than \(limit) bytes (as decoded), the client's maxBodyBytes; nothing was kept. Raise maxBodyBytes, or stream it.")
      }
      data.append(chunk)
    }
    return data
  }

  // MARK: One attempt

  /// Sends one attempt, following redirects itself so the key is attached
  /// (or not) at every hop; returns the final answer with its body unread.
  nonisolated private func perform(_ request: APIRequest<some Sendable>, url: URL, key: APIKey?,
                                   downloadingTo file: URL?) async throws -> (Exchange, HTTPURLResponse, URL) {
    let route = KeyRoute(requested: url)
    var url = url
    var method = request.method
    var body = request.body
    for _ in 0...Self.maxRedirects {
      var urlRequest = URLRequest(url: url)
      urlRequest.httpMethod = method
      urlRequest.httpBody = body
      urlRequest.timeoutInterval = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
      // Caller credentials stay on the origin asked for, as curl (7.58+) does.
      let sameOrigin = Origin(url) == route.origin
      for (name, value) in request.headers where sameOrigin || !Self.originBoundHeaders.contains(name.lowercased()) {
        urlRequest.setValue(value, forHTTPHeaderField: name)
      }
      attach(key, to: &urlRequest, route: route)
      let redactor = Redactor(key.map { [$0.value] } ?? [])
      logger.debug("\(method) \(redactor.redact(urlRequest.url?.absoluteString ?? ""))")  // built only at debug level
      let exchange = exchanges.exchange(urlRequest, downloadingTo: file)
      let http: HTTPURLResponse
      do { http = try await exchange.response() } catch {
        exchange.cancel()
        throw error
      }
      guard [301, 302, 303, 307, 308].contains(http.statusCode), let location = http.value(forHTTPHeaderField: "Location") else {
        return (exchange, http, url)
      }
      exchange.cancel()
      guard let next = URL(string: location, relativeTo: url)?.absoluteURL else {
        throw APIError(.invalidURL, "\(method) \(redactor.redact(url.absoluteString)) redirected to a Location that is not a URL.")
      }
      do { url = try policy.url(from: next.absoluteString) } catch {
        throw APIError(.invalidURL, redactor.redact("A redirect was refused: \(error)"))
      }
      if http.statusCode == 303 || ([301, 302].contains(http.statusCode) && method == "POST") {
        method = "GET"
        body = nil
      }
    }
    throw APIError(.tooManyRedirects, "\(request.method) \(Redactor(key.map { [$0.value] } ?? []).redact(url.absoluteString)) was redirected more than \(Self.maxRedirects) times.")
  }

  /// The caller's headers that carry credentials: sent only to the origin
  /// (scheme, host, port) the request was made to, never along a redirect
  /// to another one.
  static let originBoundHeaders: Set<String> = ["authorization", "cookie", "proxy-authorization"]

  /// Puts the key in its header or query parameter, if `route` lets it go
  /// to the request's URL.
  nonisolated private func attach(_ key: APIKey?, to request: inout URLRequest, route: KeyRoute) {
    guard let key, let url = request.url else { return }
    if let refusal = route.refusal(for: key, at: url) {
      logger.warning("key not attached: \(refusal)", metadata: ["key": "\(key.name)"])
      return
    }
    if let place = key.metadata.headerPlaces.first {
      request.setValue(place.scheme.map { "\($0) \(key.value)" } ?? key.value, forHTTPHeaderField: place.name)
    } else if let query = key.metadata.query {
      request.url = URL(string: url.absoluteString + (url.query(percentEncoded: true) == nil ? "?" : "&") + Self.queryPair(query, key.value))
    }
  }

  nonisolated private func lookUp(_ name: String) async throws -> APIKey {
    guard let keys else { throw APIError(.keyUnusable, "The request names the key '\(name)' but the client has no key source.") }
    let key = try await keys(name)
    guard !key.metadata.headerPlaces.isEmpty || key.metadata.query != nil else {
      throw APIError(.keyUnusable, "Key '\(name)' says neither \"header\" nor \"query\" in the APIKeys document, so odr does not know how to send it.")
    }
    if !key.metadata.headerPlaces.isEmpty, Self.breaksHeader(key.value) {
      throw APIError(.keyUnusable, "Key '\(name)' holds a line break (CR or LF) or NUL, so it cannot go in its header; nothing was sent. Store it again without one (a pasted file's trailing newline?): odr set drops one trailing newline from a pipe.")
    }
    return key
  }

  /// True for text that cannot be (part of) one HTTP header line.
  static func breaksHeader(_ text: String) -> Bool {
    text.utf8.contains { $0 == 0x0d || $0 == 0x0a || $0 == 0 }
  }

  // MARK: URLs

  nonisolated private func makeURL<Response>(_ request: APIRequest<Response>) throws -> URL {
    let text: String
    if request.path.contains("://") || baseURL == nil {
      text = request.path
    } else {
      let base = baseURL!.hasSuffix("/") ? String(baseURL!.dropLast()) : baseURL!
      text = base + (request.path.hasPrefix("/") ? request.path : "/" + request.path)
    }
    // The query items are encoded here, so they are valid: add them (before
    // any fragment) and check the whole string once.
    var full = text
    if !request.query.isEmpty {
      let pairs = request.query.map { Self.queryPair($0.name, $0.value) }.joined(separator: "&")
      let fragment = full.firstIndex(of: "#") ?? full.endIndex
      let separator = full[..<fragment].contains("?") ? "&" : "?"
      full.insert(contentsOf: separator + pairs, at: fragment)
    }
    do { return try policy.url(from: full) } catch { throw APIError(.invalidURL, error.description) }
  }

  /// `name=value`, each percent-encoded except unreserved characters.
  static func queryPair(_ name: String, _ value: String) -> String {
    "\(PercentEncoding.encode(name))=\(PercentEncoding.encode(value))"
  }


  // MARK: Retries and errors

  /// How long to wait before retrying a response with `status`, or nil when
  /// it is not retried.
  nonisolated private func retryDelay(status: Int, response: HTTPURLResponse, attempt: Int) -> Duration? {
    if let retryAfter = response.value(forHTTPHeaderField: "Retry-After"), [429, 503].contains(status) {
      guard let seconds = Int(retryAfter.trimmingWhitespace()), seconds >= 0 else { return retry.backoff(after: attempt) }
      let wait = Duration.seconds(seconds)
      return wait <= retry.maxDelay ? wait : nil
    }
    return [502, 503, 504].contains(status) ? retry.backoff(after: attempt) : nil
  }

  static func isTransient(_ error: URLError) -> Bool {
    [.networkConnectionLost, .cannotConnectToHost, .notConnectedToInternet, .dnsLookupFailed, .cannotFindHost, .badServerResponse]
      .contains(error.code)
  }

  static func transportError(_ error: URLError, method: String, url: URL, redactor: Redactor) -> APIError {
    let target = redactor.redact(url.absoluteString)
    let cause = URLError(error.code)  // the code alone: the user info holds the URL, and so maybe the key
    if error.code == .timedOut { return APIError(.timeout, "\(method) \(target) timed out.", underlying: cause) }
    return APIError(.transport, "\(method) \(target) failed: \(Self.describe(error.code)).", underlying: cause)
  }

  static func statusError(_ status: Int, data: Data, method: String, url: URL, redactor: Redactor) -> APIError {
    let excerpt = redactor.redact(String(decoding: data.prefix(512), as: UTF8.self))
    let shown = excerpt.isEmpty ? "" : ": \(excerpt.split(whereSeparator: \.isNewline).first.map(String.init) ?? "")"
    return APIError(.status, "\(method) \(redactor.redact(url.absoluteString)) answered HTTP \(status)\(shown)", status: status, bodyExcerpt: excerpt,
                    body: redactor.redact(String(decoding: data, as: UTF8.self)))
  }

  private static func describe(_ code: URLError.Code) -> String {
    switch code {
    case .cannotConnectToHost: "connection refused"
    case .networkConnectionLost: "the connection was dropped"
    case .cannotFindHost, .dnsLookupFailed: "the host name does not resolve"
    case .notConnectedToInternet: "no network"
    case .badServerResponse: "the server's response was malformed"
    case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateHasUnknownRoot:
      "the TLS connection failed"
    default: "URL error \(code.rawValue)"
    }
  }

}

extension String {
  fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
  fileprivate func trimmingWhitespace() -> String {
    var text = Substring(self)
    while text.first == " " || text.first == "\t" { text.removeFirst() }
    while text.last == " " || text.last == "\t" { text.removeLast() }
    return String(text)
  }
}
