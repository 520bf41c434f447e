import ODRKeyFormat
import Foundation
import ODRBase
package import ODRCommandLine
import ODRNetworking
import ODRURL
import Logging

/// `odr http` as APIClient runs it: URLSession, the key attached by its
/// metadata, curl's options. The helper, `odr-http`, runs it; so does a
/// test that runs `odr http` in its own process.
package struct URLSessionHTTPRunner: HTTPRunner {
  package init() {}

  package func http(_ options: HTTPOptions, output: Output) async throws {
    let key = options.key
    let policy = options.policy
    // A key over plain http to a host that is not loopback: refused before
    // anything is sent, unless the key's metadata allows it. A key that is
    // not attached for another reason (a host not among its hosts) is said
    // on stderr, unless -s: a user debugging a 401 must see it.
    if let key, let url = dropping(.isTheAnswer, { try policy.url(from: options.url) }), let refusal = KeyRoute(requested: url).refusal(for: key, at: url) {
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
    if let path = options.output { return try await download(request, with: client, to: path, options, logger: logger) }
    // To stdout, as the body arrives.
    do {
      try await client.stream(request) { response in
        logger.debug("< HTTP \(response.status)")
        if options.include { output.write(bytes: Self.head(status: response.status, headers: response.headers)) }
      } body: { chunk in
        output.write(bytes: chunk)
      }
    } catch let error as APIError where error.code == .status && options.failWithBody {
      if options.include { output.write(bytes: Self.head(status: error.status ?? 0, headers: [:])) }
      if let body = error.body { output.write(bytes: Data(body.utf8)) }
      throw error
    }
  }

  /// -o: the body goes to a temporary file beside `path` (as the transfer
  /// writes it: no size takes memory), which replaces `path` once complete;
  /// a failed transfer leaves nothing.
  private func download(_ request: APIRequest<Data>, with client: APIClient, to path: String, _ options: HTTPOptions, logger: Logger) async throws {
    let temporary = URL(filePath: path).deletingLastPathComponent().appending(path: ".odr-http-\(UUID().uuidString)")
    defer { unlink(temporary.path) }
    func commit(status: Int, headers: [String: String]) throws {
      if options.include { try Self.prepend(Self.head(status: status, headers: headers), to: temporary) }
      guard rename(temporary.path, path) == 0 else { throw Self.writeFailure(path, code: errno) }
    }
    do {
      let response = try await client.download(request, to: temporary)
      logger.debug("< HTTP \(response.status)")
      try commit(status: response.status, headers: response.headers)
    } catch let error as APIError where error.code == .status && options.failWithBody {
      try commit(status: error.status ?? 0, headers: [:])
      throw error
    }
  }

  /// The status line and headers, for -i.
  private static func head(status: Int, headers: [String: String]) -> Data {
    let lines = ["HTTP \(status)"] + headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
    return Data((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
  }

  /// Puts `head` before the contents of `file` (-i with -o), copying in
  /// 1 MiB chunks.
  private static func prepend(_ head: Data, to file: URL) throws {
    let joined = file.appendingPathExtension("head")
    defer { unlink(joined.path) }
    guard FileManager.default.createFile(atPath: joined.path, contents: head),
          let writer = FileHandle(forWritingAtPath: joined.path), let reader = FileHandle(forReadingAtPath: file.path) else {
      throw writeFailure(file.path, code: errno)
    }
    do {
      try writer.seekToEnd()
      while let chunk = try reader.read(upToCount: 1 << 20), !chunk.isEmpty { try writer.write(contentsOf: chunk) }
      try writer.close()
    } catch {
      throw writeFailure(file.path, code: ((error as? CocoaError)?.underlying as? POSIXError)?.code.rawValue ?? EIO)
    }
    guard rename(joined.path, file.path) == 0 else { throw writeFailure(file.path, code: errno) }
  }

  private static func writeFailure(_ path: String, code: Int32) -> CommandFailure {
    let full = code == ENOSPC || code == EDQUOT
    return CommandFailure("Cannot write '\(path)': \(full ? "the disk is full. Free some space and try again" : String(cString: strerror(code))).", code: full ? 8 : 1)
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
