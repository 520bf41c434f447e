import Foundation
import ODRCLITesting
import ODRTesting
import ODRSigning
import Testing

/// The Examples/WeatherClient app, as an app runs it: APIKeyProvider fetches
/// the APIKeys tag from a remote catalog — signed, its key pinned, the pack
/// encrypted to an identity in the test keyring — over URLSession, and
/// APIClient sends the key to a loopback endpoint that accepts only it.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct WeatherClientExampleTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-example-\(UUID().uuidString)")
  let suffix = UUID().uuidString.prefix(8).lowercased()
  let value = "weather-\(UUID().uuidString)"

  /// A signed catalog whose APIKeys pack is encrypted to a new identity of
  /// the test keyring; the environment for the app and the pinned key.
  /// The key is bound to the endpoint's port (`127.0.0.1:PORT`): plain
  /// http goes only to a port the key's hosts name.
  func publish(port: Int) async throws -> (environment: [String: String], pin: String) {
    var env = ProcessInfo.processInfo.environment
    for name in ["ODR_SERVICE", "ODR_IDENTITY", "ODR_TRUST", "ODR_CATALOG", "CI"] { env[name] = nil }
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    let source = root.appending(path: "src")
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    try Data(#"{"bundle": "com.example.demo", "tags": {"APIKeys": {"category": "prefetch", "secrets": true, "files": ["APIKeys.json"]}}}"#.utf8)
      .write(to: source.appending(path: "tags.json"))
    try Data(#"{"keys": {"Weather": {"value": "\#(value)", "header": "X-Api-Key", "hosts": ["127.0.0.1:\#(port)"]}}}"#.utf8)
      .write(to: source.appending(path: "APIKeys.json"))
    let made = try await Command.odr(["identity", "new", "weather-\(suffix)"], environment: env)
    try #require(made.status == 0, "\(made.stderr)")
    let recipient = try await Command.odr(["identity", "recipient", "weather-\(suffix)"], environment: env).stdout
      .trimmingCharacters(in: .whitespacesAndNewlines)
    let key = SigningKey()
    var packing = env
    packing["ODR_SIGNING_KEY"] = key.secretKeyString
    let pack = try await Command.odr(["pack", source.path, "--output", root.appending(path: "pub").path, "--quiet", "--recipient", recipient],
                                     environment: packing)
    try #require(pack.status == 0, "\(pack.stderr)")
    return (env, key.verifyingKey.description)
  }

  /// A one-request server on 127.0.0.1:`port`: 200 and a forecast for the key, 401 otherwise.
  func withEndpoint(port: Int, _ body: (Int) async throws -> Void) async throws {
    // The system python, not a PATH shim that may fork: the process the
    // test stops must be the server itself. It gives up after 30 s anyway,
    // and never holds the test's own output open.
    let server = Process()
    server.executableURL = URL(filePath: "/usr/bin/python3")
    server.arguments = ["-c", """
      import http.server, sys
      class H(http.server.BaseHTTPRequestHandler):
          def do_GET(self):
              ok = self.headers.get('X-Api-Key') == sys.argv[1] and self.path == '/forecast'
              self.send_response(200 if ok else 401); self.end_headers(); self.wfile.write(b'{"forecast": "sunny"}' if ok else b'no')
          def log_message(self, *a): pass
      s = http.server.HTTPServer(('127.0.0.1', int(sys.argv[2])), H)
      s.timeout = 30
      print(s.server_address[1], flush=True)
      s.handle_request()
      """, value, "\(port)"]
    let output = Pipe()
    server.standardOutput = output
    server.standardError = FileHandle.nullDevice
    try server.run()
    defer {
      kill(server.processIdentifier, SIGKILL)
      server.waitUntilExit()
    }
    try await body(try #require(await output.fileHandleForReading.nextLine().flatMap(Int.init)))
  }

  func runClient(catalog: String, pin: String, port: Int, environment: [String: String]) async throws -> Command.Result {
    // scripts/checks/app runs the same test on the outside app's build of the example.
    let client = ProcessInfo.processInfo.environment["ODR_WEATHER_CLIENT"] ?? Paths.products.appending(path: "WeatherClient").path
    return try await Command.run(client,
                          ["--catalog", catalog, "--trust", pin, "--url", "http://127.0.0.1:\(port)", "--memory"], environment: environment)
  }

  @Test func theExampleFetchesFromNginxAndSendsTheKey() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let endpoint = try Nginx.freePort()
    let (env, pin) = try await publish(port: endpoint)
    let nginx = try await Nginx.start(root: root.appending(path: "pub"))
    defer { nginx.stop() }
    try await withEndpoint(port: endpoint) { port in
      let result = try await runClient(catalog: nginx.url.absoluteString, pin: pin, port: port, environment: env)
      #expect(result.status == 0, "\(result.stderr)")
      #expect(result.stdout.contains("→ 200: sunny"), "\(result.stdout)")
      #expect(!result.output.contains(value))
    }
    #expect(try await nginx.logged(pathEndingWith: "catalog.json.sig"))
    // Another publisher's key pinned: the catalog is refused, nothing is sent.
    try await withEndpoint(port: endpoint) { port in
      let result = try await runClient(catalog: nginx.url.absoluteString, pin: SigningKey().verifyingKey.description, port: port, environment: env)
      #expect(result.status == 1)
      #expect(result.stderr.contains("WeatherClient:"), "\(result.stderr)")
      #expect(!result.output.contains(value))
    }
    #expect(try await Command.odr(["identity", "delete", "weather-\(suffix)"], environment: env).status == 0)
  }

  @Test func theExampleFetchesFromS3() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let endpoint = try Nginx.freePort()
    let (base, pin) = try await publish(port: endpoint)
    let moto = try await MotoServer.start()
    let env = moto.environment(moto.user, base: base)
    let published = try await Command.odr(["publish", root.appending(path: "pub").path, "s3://\(moto.bucket)/odr", "--quiet"], environment: env)
    try #require(published.status == 0, "\(published.stderr)")
    try await withEndpoint(port: endpoint) { port in
      let result = try await runClient(catalog: "s3://\(moto.bucket)/odr", pin: pin, port: port, environment: env)
      #expect(result.status == 0, "\(result.stderr)")
      #expect(result.stdout.contains("→ 200: sunny"), "\(result.stdout)")
      #expect(!result.output.contains(value))
    }
    #expect(try await Command.odr(["identity", "delete", "weather-\(suffix)"], environment: base).status == 0)
  }
}
