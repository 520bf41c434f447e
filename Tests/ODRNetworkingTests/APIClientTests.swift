import ODRBase
import Foundation
import Logging
import ODRKeyFormat
@testable import ODRNetworking
import ODRTesting
import Synchronization
import Testing

/// APIClient against a real HTTP server on 127.0.0.1 that the test starts.
/// `127.0.0.1` and `localhost` are the same server under two host names.
@Suite(.tags(.timed), .enabled(if: TestSelection.timed), .timeLimit(.minutes(2))) struct APIClientTests {
  let secret = "sk-\(UUID().uuidString)"

  /// The key, bound to `server`'s port of 127.0.0.1 (plain http goes only
  /// to a port a key's hosts name).
  func headerKey(_ server: TestHTTPServer) -> APIKey {
    APIKey(name: "Weather", value: secret, metadata: KeyMetadata(header: "Authorization", scheme: "Bearer", hosts: ["127.0.0.1:\(server.port)"]))
  }

  func client(_ key: APIKey, retry: RetryPolicy = .init(maxAttempts: 3, baseDelay: .milliseconds(10)),
              timeout: Duration = .seconds(10), logger: Logger = Logger(label: "test")) throws -> APIClient {
    try APIClient(keys: { name in
      guard name == key.name else { throw KeysError(.invalidDocument, "no key \(name)") }
      return key
    }, retry: retry, timeout: timeout, logger: logger)
  }

  /// Red team 17: a key or header value with CR/LF was silently left off
  /// the request; now nothing is sent and the error says why.
  @Test(arguments: ["k\r\n", "a\nb", "a\rb"])
  func aLineBreakInAKeyOrHeaderIsRefused(_ value: String) async throws {
    try await TestHTTPServer.answering({ _ in .text("ok") }) { server in
      let key = APIKey(name: "Weather", value: value, metadata: KeyMetadata(header: "X-Key", hosts: ["127.0.0.1:\(server.port)"]))
      await #expect(throws: APIError.self) { _ = try await client(key).send(.data(path: server.url + "/a", key: "Weather")) }
      let plain = try APIClient()
      await #expect(throws: APIError.self) { _ = try await plain.send(.data(path: server.url + "/a", headers: ["X-Test": value])) }
      #expect(server.requests.isEmpty)
    }
  }

  @Test func theKeyArrivesInItsHeaderOrQueryOnlyAtItsHosts() async throws {
    try await TestHTTPServer.answering({ _ in .text("ok") }) { server in
      let header = try client(headerKey(server))
      _ = try await header.send(.data(path: server.url + "/a", key: "Weather"))
      #expect(server.requests.last?.headers["authorization"] == "Bearer \(secret)")

      let queryKey = APIKey(name: "Maps", value: secret + "+&=", metadata: KeyMetadata(query: "key", hosts: ["127.0.0.1:\(server.port)"]))
      _ = try await client(queryKey).send(.data(path: server.url + "/b", query: ["q": "a b"], key: "Maps"))
      #expect(server.requests.last?.query == "q=a%20b&key=\(secret)%2B%26%3D")

      // Same key, a host it is not bound to: the request goes without it.
      _ = try await header.send(.data(path: server.otherHostURL + "/c", key: "Weather"))
      #expect(server.requests.last?.path == "/c")
      #expect(server.requests.last?.headers["authorization"] == nil)
      let unbound = APIKey(name: "Weather", value: secret, metadata: KeyMetadata(header: "X-Api-Key"))
      _ = try await client(unbound).send(.data(path: server.url + "/d", key: "Weather"))
      #expect(server.requests.last?.headers["x-api-key"] == nil)
    }
  }

  @Test func aCrossHostRedirectDropsTheKeyASameHostOneKeepsIt() async throws {
    try await TestHTTPServer.answering({ request in
      switch request.path {
      case "/away": TestHTTPServer.Reply(status: 302, headers: ["Location": "http://localhost:\(request.headers["host"]!.split(separator: ":")[1])/landing"])
      case "/stay": TestHTTPServer.Reply(status: 307, headers: ["Location": "/landing"])
      default: .text("landed")
      }
    }) { server in
      let api = try client(headerKey(server))
      let away = try await api.send(.data(path: server.url + "/away", key: "Weather"))
      #expect(String(decoding: away.value, as: UTF8.self) == "landed")
      #expect(server.requests.map(\.path) == ["/away", "/landing"])
      #expect(server.requests[0].headers["authorization"] == "Bearer \(secret)")
      #expect(server.requests[1].headers["authorization"] == nil)
      #expect(server.requests[1].headers["host"]?.hasPrefix("localhost") == true)

      _ = try await api.send(.data(path: server.url + "/stay", key: "Weather"))
      #expect(server.requests.last?.path == "/landing")
      #expect(server.requests.last?.headers["authorization"] == "Bearer \(secret)")
    }
  }

  /// Issue 38, 2: the caller's own credential headers stay on the origin
  /// asked for (curl drops them since 7.58); other headers follow.
  @Test func callerCredentialsDoNotFollowARedirectToAnotherOrigin() async throws {
    try await TestHTTPServer.answering({ _ in .text("other origin") }) { other in
      try await TestHTTPServer.answering({ request in
        request.path == "/stay" ? .text("same origin") : TestHTTPServer.Reply(status: 302, headers: ["Location": other.url + "/landing"])
      }) { server in
        let headers = ["Authorization": "Basic c2VjcmV0", "Cookie": "session=s3cr3t", "Proxy-Authorization": "Basic cHJveHk=", "X-Trace": "t-1"]
        let client = try APIClient(keys: { _ in throw KeysError(.invalidDocument, "no keys") })
        _ = try await client.send(APIRequest<Data>.data(path: server.url + "/moved", headers: headers))
        #expect(server.requests.first?.headers["cookie"] == "session=s3cr3t")
        let landed = try #require(other.requests.first)
        #expect(landed.headers["authorization"] == nil && landed.headers["cookie"] == nil && landed.headers["proxy-authorization"] == nil,
                "\(landed.headers)")
        #expect(landed.headers["x-trace"] == "t-1")
      }
    }
  }

  @Test func aRedirectToAnotherPortOfTheSameHostDropsTheKey() async throws {
    try await TestHTTPServer.answering({ _ in .text("other port") }) { other in
      try await TestHTTPServer.answering({ _ in TestHTTPServer.Reply(status: 302, headers: ["Location": other.url + "/landing"]) }) { server in
        let moved = try await client(headerKey(server)).send(.data(path: server.url + "/moved", key: "Weather"))
        #expect(String(decoding: moved.value, as: UTF8.self) == "other port")
        #expect(server.requests.first?.headers["authorization"] == "Bearer \(secret)")
        #expect(other.requests.map(\.path) == ["/landing"])
        #expect(other.requests.first?.headers["authorization"] == nil)
      }
    }
  }

  @Test(arguments: [
    ("https://api.example/v1", "https://api.example:443/v2", true),
    ("https://api.example/v1", "https://api.example:8443/v1", false),
    ("https://api.example/v1", "http://api.example/v1", false),
    ("http://api.example/v1", "http://api.example/v1", false),
    ("http://127.0.0.1:8080/", "http://127.0.0.1:8080/x", true),
    ("http://localhost/", "http://localhost:80/x", true),
    ("https://other.example/", "https://other.example/", false),
  ])
  func keysGoOnlyToTheRequestedOriginOverHTTPSOrLoopback(requested: String, hop: String, allowed: Bool) {
    // (KeyHostTests holds the rule of hosts and ports; here, the origin.)
    let key = APIKey(name: "K", value: secret, metadata: KeyMetadata(header: "X-Api-Key", hosts: ["api.example", "127.0.0.1:8080", "localhost:80"]))
    let route = KeyRoute(requested: URL(string: requested)!)
    #expect((route.refusal(for: key, at: URL(string: hop)!) == nil) == allowed)
  }

  @Test func insecureLetsAKeyOverPlainHTTPToItsOwnOriginOnly() {
    let key = APIKey(name: "K", value: secret, metadata: KeyMetadata(header: "X-Api-Key", hosts: ["api.example:80"], insecure: true))
    let route = KeyRoute(requested: URL(string: "http://api.example/v1")!)
    #expect(route.refusal(for: key, at: URL(string: "http://api.example/v2")!) == nil)
    #expect(route.refusal(for: key, at: URL(string: "http://api.example:8080/v2")!) != nil)
  }

  @Test func transientFailuresAreRetriedABoundedNumberOfTimes() async throws {
    let failures = Mutex(2)
    try await TestHTTPServer.answering({ request in
      if request.path == "/always" { return .text("down", status: 503) }
      if request.path == "/drop" {
        return failures.withLock { n in n -= 1; return n >= 0 } ? TestHTTPServer.Reply(drop: true) : .text("ok")
      }
      return failures.withLock { n in n -= 1; return n >= 0 } ? .text("busy", status: 502) : .text("ok")
    }) { server in
      let api = try client(headerKey(server))
      #expect(try await api.send(.data(path: server.url + "/flaky")).status == 200)
      #expect(server.requests.filter { $0.path == "/flaky" }.count == 3)

      failures.withLock { $0 = 2 }
      #expect(try await api.send(.data(path: server.url + "/drop")).status == 200)
      #expect(server.requests.filter { $0.path == "/drop" }.count == 3)

      let error = await #expect(throws: APIError.self) { try await api.send(.data(path: server.url + "/always")) }
      #expect(error?.status == 503)
      #expect(server.requests.filter { $0.path == "/always" }.count == 3)

      // POST is not idempotent: one attempt only.
      await #expect(throws: APIError.self) { try await api.send(.data(method: "POST", path: server.url + "/always", body: Data("x".utf8))) }
      #expect(server.requests.filter { $0.path == "/always" }.count == 4)
    }
  }

  @Test func retryAfterIsRespectedOrTheResponseIsReturned() async throws {
    let first = Mutex(true)
    try await TestHTTPServer.answering({ request in
      if request.path == "/later" { return TestHTTPServer.Reply(status: 429, headers: ["Retry-After": "3600"]) }
      return first.withLock { f in defer { f = false }; return f }
        ? TestHTTPServer.Reply(status: 429, headers: ["Retry-After": "1"]) : .text("ok")
    }) { server in
      let api = try client(headerKey(server))
      #expect(try await api.send(.data(path: server.url + "/limited")).status == 200)
      let times = server.requests.map(\.received)
      #expect(times.count == 2)
      #expect(times[1] - times[0] >= .milliseconds(950), "retried after \(times[1] - times[0]), not after Retry-After: 1")

      // An hour is longer than the policy's maxDelay: not waited for.
      let error = await #expect(throws: APIError.self) { try await api.send(.data(path: server.url + "/later")) }
      #expect(error?.status == 429)
      #expect(server.requests.filter { $0.path == "/later" }.count == 1)
    }
  }

  @Test func cancellationStopsASlowRequestPromptly() async throws {
    try await TestHTTPServer.answering({ _ in TestHTTPServer.Reply(body: Data("late".utf8), delay: .seconds(10)) }) { server in
      let api = try client(headerKey(server))
      let task = Task { try await api.send(.data(path: server.url + "/slow", key: "Weather")) }
      // Cancel once the server holds the request, not after a guessed delay.
      while !server.requests.contains(where: { $0.path == "/slow" }) { try await Task.sleep(for: .milliseconds(2)) }
      let start = ContinuousClock.now
      task.cancel()
      await #expect(throws: CancellationError.self) { try await task.value }
      #expect(ContinuousClock.now - start < .seconds(3))
    }
  }

  @Test func aTimeoutIsATimeoutError() async throws {
    try await TestHTTPServer.answering({ _ in TestHTTPServer.Reply(delay: .seconds(5)) }) { server in
      let api = try client(headerKey(server), retry: .never, timeout: .milliseconds(500))
      let error = await #expect(throws: APIError.self) { try await api.send(.data(path: server.url + "/slow")) }
      #expect(error?.code == .timeout)
    }
  }

  @Test func keyValuesAreRedactedFromErrorsDescriptionsAndLogs() async throws {
    let lines = LogLines()
    let logger = Logger(label: "test") { _ in CollectingLogHandler(lines: lines) }
    // The server echoes what it got, key included, in an error body.
    try await TestHTTPServer.answering({ request in
      .text("denied: \(request.headers["authorization"] ?? "") \(request.target)", status: 403)
    }) { server in
      let queryKey = APIKey(name: "Maps", value: secret, metadata: KeyMetadata(query: "key", hosts: ["127.0.0.1:\(server.port)"]))
      for key in [headerKey(server), queryKey] {
        let api = try client(key, logger: logger)
        let error = await #expect(throws: APIError.self) { try await api.send(.data(path: server.url + "/x", key: key.name)) }
        #expect(error?.status == 403)
        for text in [error?.description, error?.debugDescription, error?.bodyExcerpt, error.map { String(reflecting: $0) }] {
          #expect(text?.contains(secret) == false)
          #expect(text?.contains("<redacted>") == true || text == error?.debugDescription || text == error.map { String(reflecting: $0) })
        }
      }
      // A connection failure with the key in the query.
      await server.stop()
      let api = try client(queryKey, retry: .never, logger: logger)
      let error = await #expect(throws: APIError.self) { try await api.send(.data(path: server.url + "/gone", key: "Maps")) }
      #expect(error?.code == .transport)
      #expect(error?.description.contains(secret) == false)
      #expect(!lines.all.isEmpty)
      #expect(lines.all.allSatisfy { !$0.contains(secret) })
    }
  }

  @Test func urlStringsGoThroughThePolicy() async throws {
    try await TestHTTPServer.answering({ _ in .text("ok") }) { server in
      let strict = try client(headerKey(server))
      let error = await #expect(throws: APIError.self) { try await strict.send(.data(path: server.url + "/a b")) }
      #expect(error?.code == .invalidURL)
      #expect(error?.description.contains("space (U+0020) in the path") == true)
      #expect(server.requests.isEmpty)
      let lenient = try APIClient(policy: .encoding)
      _ = try await lenient.send(.data(path: server.url + "/a b"))
      #expect(server.requests.last?.path == "/a%20b")
    }
  }

  /// 3 MB of zeros, gzip-compressed (about 3 KB on the wire).
  static func gzipBomb() async throws -> Data {
    let file = FileManager.default.temporaryDirectory.appending(path: "odr-bomb-\(UUID().uuidString).gz")
    defer { try? FileManager.default.removeItem(at: file) }
    let made = try await Command.run("/bin/sh", ["-c", "head -c 3000000 /dev/zero | gzip -9 > '\(file.path)'"])
    try #require(made.status == 0, "\(made.stderr)")
    return try Data(contentsOf: file)
  }

  /// A body is capped as decoded: a few KB of gzip that decode past
  /// maxBodyBytes are refused (.tooLarge), while stream(…) and download(…)
  /// pass any size through. (How stream's chunks are cut depends on how
  /// fast the reader is, so only their sum is checked; that `odr http`
  /// keeps nothing is NetworkCommandsTests' peak-memory test.)
  @Test func aBodyIsCappedAsDecodedUnlessStreamed() async throws {
    let bomb = try await Self.gzipBomb()
    try await TestHTTPServer.answering({ _ in TestHTTPServer.Reply(headers: ["Content-Encoding": "gzip"], body: bomb) }) { server in
      let client = try APIClient(retry: .init(maxAttempts: 1), maxBodyBytes: 1_000_000)
      let error = await #expect(throws: APIError.self) { try await client.send(.data(path: server.url + "/bomb")) }
      #expect(error?.code == .tooLarge)
      #expect(error?.message.contains("larger than 1000000 bytes") == true)
      var head: Int?, total = 0
      try await client.stream(.data(path: server.url + "/bomb")) { head = $0.status } body: { total += $0.count }
      #expect(head == 200)
      #expect(total == 3_000_000)
      let file = FileManager.default.temporaryDirectory.appending(path: "odr-download-\(UUID().uuidString)")
      defer { try? FileManager.default.removeItem(at: file) }
      #expect(try await client.download(.data(path: server.url + "/bomb"), to: file).status == 200)
      #expect(try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int == 3_000_000)
      let small = try APIClient(retry: .init(maxAttempts: 1))
      #expect(try await small.send(.data(path: server.url + "/bomb")).value.count == 3_000_000)
    }
  }

  @Test func typedRequestsDecodeJSON() async throws {
    struct Forecast: Decodable, Sendable { let summary: String }
    try await TestHTTPServer.answering({ _ in .text(#"{"summary": "sunny"}"#) }) { server in
      let api = try APIClient(baseURL: server.url + "/v1")
      let response = try await api.send(APIRequest<Forecast>(path: "forecast", query: ["city": "Oslo"]))
      #expect(response.value.summary == "sunny")
      #expect(server.requests.last?.target == "/v1/forecast?city=Oslo")
    }
  }
}

/// Every formatted log line, shared by the handlers a logger makes.
final class LogLines: Sendable {
  private let lines = Mutex<[String]>([])
  func append(_ line: String) { lines.withLock { $0.append(line) } }
  var all: [String] { lines.withLock { $0 } }
}

/// Collects every formatted log line, metadata included.
struct CollectingLogHandler: LogHandler {
  let lines: LogLines
  var metadata: Logger.Metadata = [:]
  var logLevel: Logger.Level = .trace

  subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  func log(event: LogEvent) {
    let all = metadata.merging(event.metadata ?? [:]) { $1 }
    lines.append("\(event.level) \(event.message) \(all)")
  }
}
