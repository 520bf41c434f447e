import Foundation
import ODRCommandLine
import ODRKeys
import ODRNetworking
import ODRURL
import Logging

/// `odr http` as APIClient runs it: URLSession, the key attached by its
/// metadata, curl's options.
struct URLSessionHTTPRunner: HTTPRunner {
  func http(_ options: HTTPOptions, output: Output) async throws {
    let key = options.key
    let policy = options.policy
    // A key over plain http to a host that is not loopback: refused before
    // anything is sent, unless the key's metadata allows it. A key that is
    // not attached for another reason (a host not among its hosts) is said
    // on stderr, unless -s: a user debugging a 401 must see it.
    if let key, let url = try? policy.url(from: options.url), let refusal = KeyRoute(requested: url).refusal(for: key, at: url) {
      if refusal.hasPrefix("plain http") {
        throw CommandFailure("Key '\(key.name)' is not sent over \(refusal). Use https://, or drop --key.", code: 2)
      }
      if !options.silent {
        let hosts = key.metadata.hosts.map { " (its hosts: \($0.joined(separator: ", ")))" } ?? " (it has no \"hosts\")"
        output.error("key '\(key.name)' is not attached: \(refusal)\(hosts). The request is sent without it.")
      }
    }
    let lookup: APIClient.KeyLookup? = key.map { key in { @Sendable _ in key } }
    var logger = Logger(label: "odr.http") { _ in OneLineLogHandler(output: output) }
    logger.logLevel = options.verbose ? .debug : .critical
    let client = try APIClient(policy: policy, keys: lookup, retry: RetryPolicy(maxAttempts: options.attempts),
                               timeout: .milliseconds(Int(options.maxTime * 1000)), logger: logger)
    var headers = Dictionary(options.headers.map { ($0.name, $0.value) }) { _, last in last }
    if !headers.keys.contains(where: { $0.lowercased() == "user-agent" }) { headers["User-Agent"] = options.userAgent }
    let request = APIRequest<Data>.data(method: options.method, path: options.url, headers: headers, body: options.body, key: key?.name)
    do {
      let response = try await client.send(request)
      logger.debug("< HTTP \(response.status), \(response.value.count) bytes")
      try deliver(status: response.status, headers: response.headers, body: response.value, options, to: output)
    } catch let error as APIError where error.code == .status && options.failWithBody {
      if let body = error.body { try deliver(status: error.status ?? 0, headers: [:], body: Data(body.utf8), options, to: output) }
      throw error
    }
  }
}

/// Writes what `odr http` received: the status line and headers first with
/// -i, the body to stdout or to -o's file.
private func deliver(status: Int, headers: [String: String], body: Data, _ options: HTTPOptions, to stdout: Output) throws {
  var bytes = Data()
  if options.include {
    let lines = ["HTTP \(status)"] + headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
    bytes.append(contentsOf: (lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
  }
  bytes.append(body)
  guard let output = options.output else { return stdout.write(bytes: bytes) }
  do { try bytes.write(to: URL(filePath: output), options: .atomic) } catch {
    throw CommandFailure("Cannot write '\(output)': \(error.localizedDescription).", code: 1)
  }
}

/// odr's log style for `odr http -v`: one line per event on stderr,
/// `odr: message key=value …`, no timestamps.
private struct OneLineLogHandler: LogHandler {
  let output: Output
  var logLevel: Logger.Level = .info
  var metadata: Logger.Metadata = [:]

  subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  func log(event: LogEvent) {
    let fields = (metadata.merging(event.metadata ?? [:]) { $1 }).sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
    output.error("\(event.message)\(fields)")
  }
}
