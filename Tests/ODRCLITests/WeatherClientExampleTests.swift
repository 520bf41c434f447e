import Foundation
import ODRTesting
import Testing

/// The Examples/WeatherClient app: gets its key through APIKeyProvider
/// (fetching the Demo catalog into a memory store) and calls a loopback
/// endpoint that accepts only that key.
@Suite(.timeLimit(.minutes(2))) struct WeatherClientExampleTests {
  @Test func theExampleSendsTheFetchedKey() async throws {
    let root = FileManager.default.temporaryDirectory.appending(path: "odr-example-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    var env = ProcessInfo.processInfo.environment
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    // The pack is encrypted to an identity made by age-keygen; the app gets it in ODR_IDENTITY.
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    let identity = root.appending(path: "identity.txt")
    try #require(try await Command.run("/usr/bin/age-keygen", ["-o", identity.path]).status == 0)
    let recipient = try await Command.run("/usr/bin/age-keygen", ["-y", identity.path]).stdout.split(separator: "\n")[0]
    env["ODR_IDENTITY"] = try String(contentsOf: identity, encoding: .utf8)
    let pack = try await Command.odr(["pack", Paths.packageRoot.appending(path: "resources/Demo").path,
                                "--output", root.appending(path: "catalog").path, "--quiet", "--recipient", String(recipient)], environment: env)
    try #require(pack.status == 0, "\(pack.stderr)")

    // A one-request server on 127.0.0.1: 200 for the demo key, 401 otherwise.
    let server = Process()
    server.executableURL = URL(filePath: "/usr/bin/env")
    server.arguments = ["python3", "-c", """
      import http.server, sys
      class H(http.server.BaseHTTPRequestHandler):
          def do_GET(self):
              ok = self.headers.get('X-Api-Key') == 'demo-weather-0000-not-a-real-key'
              self.send_response(200 if ok else 401); self.end_headers(); self.wfile.write(b'sunny' if ok else b'no')
          def log_message(self, *a): pass
      s = http.server.HTTPServer(('127.0.0.1', 0), H)
      print(s.server_address[1], flush=True)
      s.handle_request()
      """]
    let output = Pipe()
    server.standardOutput = output
    try server.run()
    defer { server.terminate() }
    let port = try #require(await output.fileHandleForReading.nextLine().flatMap(Int.init))

    let client = Paths.products.appending(path: "WeatherClient").path
    let result = try await Command.run(client, ["--catalog", root.appending(path: "catalog").path,
                                          "--url", "http://127.0.0.1:\(port)/forecast", "--memory"], environment: env)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("→ 200, 5 bytes"))
    #expect(!result.output.contains("demo-weather-0000-not-a-real-key"))
  }
}
