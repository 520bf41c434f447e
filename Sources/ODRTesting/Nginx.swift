public import Foundation
import ODRBase

/// A real nginx (Debian's) serving a folder on 127.0.0.1, started by a test
/// in a temporary prefix and stopped by it: static files with ETag,
/// Last-Modified and Range as any web server or CDN gives them, and an
/// access log to count requests and bytes.
public final class Nginx: @unchecked Sendable {
  /// One line of the access log.
  public struct Request: Sendable {
    public let method: String
    public let path: String
    public let status: Int
    /// Body bytes sent.
    public let bytes: Int
    /// True when it carried an `Authorization` or `X-Catalog-Token` header.
    public let authenticated: Bool
    /// Bytes sent in all, headers included.
    public let totalBytes: Int
  }

  /// `http://127.0.0.1:PORT/`.
  public let url: URL
  public let port: Int
  /// A plain http server of its own in the same nginx, which ``settle()``
  /// asks (whatever the test's server answers, at whatever rate).
  private let settlePort: Int
  private let prefix: URL
  private let process: Daemon

  /// Serves `root`. `maxRanges: 0` makes it ignore `Range` (full 200
  /// answers); `status` answers every request with that status instead;
  /// `rate` limits each response to that many bytes per second;
  /// `locations` replaces the default `location / { }` with raw nginx
  /// configuration (to require a header, or redirect); `tls` serves https
  /// with that certificate chain and key (PEM files) instead of http.
  public init(root: URL, maxRanges: Int? = nil, status: Int? = nil, rate: String? = nil, locations: String? = nil,
              tls: (certificate: URL, key: URL)? = nil) throws {
    guard let binary = ["/usr/sbin/nginx", "/usr/bin/nginx"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
      throw TestFailure("nginx is not installed; run scripts/bootstrap.")
    }
    prefix = FileManager.default.temporaryDirectory.appending(path: "odr-nginx-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: prefix.appending(path: "tmp"), withIntermediateDirectories: true)
    port = try Self.freePort()
    var settlePort = try Self.freePort()
    while settlePort == port { settlePort = try Self.freePort() }
    self.settlePort = settlePort
    url = URL(string: "\(tls == nil ? "http" : "https")://127.0.0.1:\(port)/")!
    var server = "listen 127.0.0.1:\(port)\(tls == nil ? "" : " ssl"); root \(root.path);"
    if let tls { server += " ssl_certificate \(tls.certificate.path); ssl_certificate_key \(tls.key.path);" }
    if let maxRanges { server += " max_ranges \(maxRanges);" }
    if let rate { server += " limit_rate \(rate);" }
    let location = locations ?? status.map { "location / { return \($0); }" } ?? "location / { }"
    let config = """
      daemon off; master_process off; worker_processes 1;
      pid \(prefix.path)/nginx.pid; error_log \(prefix.path)/error.log;
      events { worker_connections 512; }
      http {
        map "$http_authorization$http_x_catalog_token" $odr_auth { "" "-"; default "auth"; }
        log_format odr '$request_method $uri $status $body_bytes_sent $odr_auth $bytes_sent';
        access_log \(prefix.path)/access.log odr;
        client_body_temp_path \(prefix.path)/tmp/body; proxy_temp_path \(prefix.path)/tmp/proxy;
        fastcgi_temp_path \(prefix.path)/tmp/fastcgi; uwsgi_temp_path \(prefix.path)/tmp/uwsgi; scgi_temp_path \(prefix.path)/tmp/scgi;
        default_type application/octet-stream; keepalive_timeout 5;
        server { \(server) \(location) }
        server { listen 127.0.0.1:\(settlePort); location / { return 204; } }
      }
      """
    try config.write(to: prefix.appending(path: "nginx.conf"), atomically: true, encoding: .utf8)
    process = try Daemon(binary, ["-e", prefix.appending(path: "error.log").path, "-p", prefix.path, "-c", prefix.appending(path: "nginx.conf").path])
    // Ready when it accepts a connection (bounded: 5 s).
    for _ in 0..<500 {
      if Self.accepts(port) { return }
      guard process.isRunning else { break }
      usleep(10_000)
    }
    // the log, if any, explains the failure
    let log = (dropping(.messageOnly) { try String(contentsOf: prefix.appending(path: "error.log"), encoding: .utf8) }) ?? ""
    stop()
    throw TestFailure("nginx did not start on port \(port): \(log.suffix(500))")
  }

  /// `init`, waiting for nginx to start on a thread of its own rather than
  /// on the cooperative pool.
  public static func start(root: URL, maxRanges: Int? = nil, status: Int? = nil, rate: String? = nil, locations: String? = nil,
                           tls: (certificate: URL, key: URL)? = nil) async throws -> Nginx {
    try await Command.offPool { try Nginx(root: root, maxRanges: maxRanges, status: status, rate: rate, locations: locations, tls: tls) }
  }

  /// Waits until the access log holds a request whose path ends with
  /// `suffix` (nginx writes a line when the connection ends, a moment after
  /// a client was killed). False after 5 s.
  public func logged(pathEndingWith suffix: String) async throws -> Bool {
    for _ in 0..<1000 {
      if logLines.contains(where: { $0.path.hasSuffix(suffix) }) { return true }
      try await Task.sleep(for: .milliseconds(5))
    }
    return false
  }

  /// Returns once every request answered so far is in the access log:
  /// it asks for a path of its own and waits for that line (nginx logs a
  /// request when it ends, in order, so the earlier ones are there too).
  /// The caller's later "no new request" counts then start from the truth.
  public func settle() async throws {
    let path = "/.settle-\(UUID().uuidString)"
    let port = settlePort
    try await Command.offPool { try Self.get(path, port: port) }
    guard try await logged(pathEndingWith: path) else { throw TestFailure("nginx did not log \(path) within 5 s") }
  }

  /// Every request answered so far (``settle()``, then the log): what a
  /// test reads once the client it ran has ended.
  public func settledRequests() async throws -> [Request] {
    try await settle()
    return requests
  }

  /// The requests matching `predicate` once the log holds at least
  /// `count` of them (nginx logs a request a moment after the client has
  /// its answer), or what it holds after 5 s.
  public func requests(atLeast count: Int, where predicate: (Request) -> Bool = { _ in true }) async throws -> [Request] {
    for _ in 0..<1000 {
      let matching = requests.filter(predicate)
      if matching.count >= count { return matching }
      try await Task.sleep(for: .milliseconds(5))
    }
    return requests.filter(predicate)
  }

  /// The requests logged so far, from the access log, without those of
  /// ``settle()``. nginx logs a request a moment after its answer: a test
  /// reads ``settledRequests()`` or waits with ``requests(atLeast:where:)``.
  public var requests: [Request] {
    logLines.filter { !$0.path.hasPrefix("/.settle-") }
  }

  /// Every request of the access log, ``settle()``'s included.
  private var logLines: [Request] {
    // no log yet: no requests
    let text = (dropping(.isTheAnswer) { try String(contentsOf: prefix.appending(path: "access.log"), encoding: .utf8) }) ?? ""
    return text.split(separator: "\n").compactMap { line in
      let parts = line.split(separator: " ")
      guard parts.count == 6, let status = Int(parts[2]), let bytes = Int(parts[3]), let total = Int(parts[5]) else { return nil }
      return Request(method: String(parts[0]), path: String(parts[1]), status: status, bytes: bytes, authenticated: parts[4] == "auth", totalBytes: total)
    }
  }

  /// Stops the server and removes its prefix.
  public func stop() {
    process.stop()
    // clean-up of a temporary folder
    dropping(.cleanup) { try FileManager.default.removeItem(at: prefix) }
  }

  deinit { stop() }

  /// A port nothing listens on now (the kernel's choice).
  public static func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestFailure("socket() failed") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw TestFailure("bind() failed") }
    return Int(UInt16(bigEndian: address.sin_port))
  }

  static func accepts(_ port: Int) -> Bool {
    guard let fd = connected(to: port) else { return false }
    close(fd)
    return true
  }

  /// A socket connected to 127.0.0.1:`port`, or nil.
  static func connected(to port: Int) -> Int32? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
    if !connected { close(fd) }
    return connected ? fd : nil
  }

  /// An HTTP/1.0 GET of `path` from 127.0.0.1:`port`, its answer read to
  /// the end (nginx closes the connection; 5 s at most), blocking the
  /// calling thread.
  static func get(_ path: String, port: Int) throws {
    guard let fd = connected(to: port) else { throw TestFailure("nothing accepts connections on port \(port)") }
    defer { close(fd) }
    var limit = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
    guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else {
      throw TestFailure("could not send a request to port \(port)")
    }
    var buffer = [UInt8](repeating: 0, count: 4096)
    while case let count = buffer.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, 0) }), count > 0 {}
  }
}
