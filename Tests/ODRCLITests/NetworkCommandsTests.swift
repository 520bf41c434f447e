import Foundation
import ODRCLITesting
import ODRTesting
import Testing

/// `odr url check` and `odr http`, run in the test process with the
/// helper's runner (URLSession), and the hand-over itself: `odr` hands
/// `odr http` to its helper, `odr-http`, before parsing.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct NetworkCommandsTests {
  @Test func urlCheckExitsByThePolicyAndExplains() async throws {
    let ok = try await Command.odr(["url", "check", "https://example.com/a%20b"])
    #expect(ok.status == 0, "\(ok.stderr)")
    #expect(ok.stdout.contains("*consistent  accept"))
    let bad = try await Command.odr(["url", "check", "https://example.com/ok", "https://example.com/a b"])
    #expect(bad.status == 1)
    #expect(bad.stdout.contains("space (U+0020) in the path at character 21"))
    #expect(bad.stderr.contains("1 of 2 strings rejected under the consistent policy"))
    #expect(try await Command.odr(["url", "check", "--policy", "encoding", "https://example.com/a b"]).status == 0)
    #expect(try await Command.odr(["url", "check", "--policy", "nonsense", "x"]).status == 2)
  }

  @Test func urlCheckReadsStdinAndPrintsJSON() async throws {
    let result = try await Command.odr(["url", "check", "--json", "-"], input: "https://example.com/\nhttps://example.com/%zz\n")
    #expect(result.status == 1)
    let reports = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
    #expect(reports.count == 2)
    #expect(reports[1]["encoding"] as? String == "https://example.com/%25zz")
    let verdicts = reports[1]["verdicts"] as? [String: [String: Any]]
    #expect(verdicts?["strict"]?["accepted"] as? Bool == false)
    #expect(verdicts?["encoding"]?["accepted"] as? Bool == true)
  }

  /// Publishes `keys` (an extended APIKeys document's "keys" object) as
  /// `bundle`'s APIKeys tag and fetches it into the shared keyring; the
  /// environment of a client that reads them.
  func fetchKeys(_ keys: String, bundle: String, root: URL) async throws -> [String: String] {
    var env = KeyringSession.shared.environment
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    env["ODR_SERVICE"] = bundle
    let source = root.appending(path: "src")
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    try Data(#"{"bundle": "\#(bundle)", "tags": {"APIKeys": {"category": "prefetch", "secrets": true, "files": ["APIKeys.json"]}}}"#.utf8)
      .write(to: source.appending(path: "tags.json"))
    try Data(#"{"keys": \#(keys)}"#.utf8).write(to: source.appending(path: "APIKeys.json"))
    let pack = try await Command.odr(["pack", source.path, "--output", root.appending(path: "pub").path, "--quiet", "--plaintext-secrets"], environment: env)
    try #require(pack.status == 0, "\(pack.stderr)")
    let fetch = try await Command.odr(["fetch", "APIKeys", "--catalog", root.appending(path: "pub").path, "--quiet"], environment: env)
    try #require(fetch.status == 0, "\(fetch.stderr)")
    return env
  }

  @Test func httpAttachesTheKeyFromTheKeyringOnlyToItsHost() async throws {
    let root = FileManager.default.temporaryDirectory.appending(path: "odr-http-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    let bundle = "com.odr.http.\(UUID().uuidString.prefix(8).lowercased())"
    let secret = "sk-\(UUID().uuidString)"
    try await TestHTTPServer.answering({ request in
      switch request.path {
      case "/away": TestHTTPServer.Reply(status: 302, headers: ["Location": "http://localhost:\(request.headers["host"]!.split(separator: ":")[1])/landing"])
      case "/missing": .text("nothing here for \(request.headers["authorization"] ?? "")", status: 404)
      default: TestHTTPServer.Reply(headers: ["X-Served": "yes"], body: Data("body:".utf8) + request.body)
      }
    }) { server in
      let env = try await fetchKeys(#"{"Weather": {"value": "\#(secret)", "header": "Authorization", "scheme": "Bearer", "hosts": ["127.0.0.1:\#(server.port)"]}}"#,
                                    bundle: bundle, root: root)
      defer { Command.odrInBackground(["delete", "--all"], environment: env) }

      try Data("payload".utf8).write(to: root.appending(path: "body.txt"))
      let post = try await Command.odr(["http", "POST", server.url + "/items", "--key", "Weather", "--data", "@" + root.appending(path: "body.txt").path,
                                  "--include"], environment: env)
      #expect(post.status == 0, "\(post.stderr)")
      #expect(post.stdout.hasPrefix("HTTP 200\r\n"))
      #expect(post.stdout.hasSuffix("\r\n\r\nbody:payload"))
      #expect(server.requests.last?.headers["authorization"] == "Bearer \(secret)")

      // No --service and no $ODR_SERVICE: the catalog's bundle, as fetch, exec and env.
      var catalogOnly = env
      catalogOnly["ODR_SERVICE"] = nil
      catalogOnly["ODR_CATALOG"] = root.appending(path: "pub").path
      let byBundle = try await Command.odr(["http", server.url + "/bundle", "--key", "Weather"], environment: catalogOnly)
      #expect(byBundle.status == 0, "\(byBundle.stderr)")
      #expect(server.requests.last?.headers["authorization"] == "Bearer \(secret)")
      catalogOnly["ODR_CATALOG"] = nil
      let noService = try await Command.odr(["http", server.url + "/x", "--key", "Weather"], environment: catalogOnly)
      #expect(noService.status == 2 && noService.stderr.contains("No service for --key"), "\(noService.stderr)")

      // A host that is not among the key's hosts: sent without it, and said (not with -s).
      let other = server.url.replacingOccurrences(of: "127.0.0.1", with: "localhost") + "/x"
      let unattached = try await Command.odr(["http", "GET", other, "--key", "Weather"], environment: env)
      #expect(unattached.status == 0 && unattached.stderr == "odr: key 'Weather' is not attached: localhost is not one of its hosts (its hosts: 127.0.0.1:\(server.port)). The request is sent without it.\n", "\(unattached.stderr)")
      #expect(server.requests.last?.headers["authorization"] == nil)
      let silent = try await Command.odr(["http", "GET", other, "--key", "Weather", "-s"], environment: env)
      #expect(silent.status == 0 && silent.stderr.isEmpty, "\(silent.stderr)")

      let away = try await Command.odr(["http", "GET", server.url + "/away", "--key", "Weather"], environment: env)
      #expect(away.status == 0)
      #expect(server.requests.last?.path == "/landing")
      #expect(server.requests.last?.headers["authorization"] == nil)

      let missing = try await Command.odr(["http", "GET", server.url + "/missing", "--key", "Weather"], environment: env)
      #expect(missing.status == 7)
      #expect(missing.stderr.contains("HTTP 404"))
      #expect(!missing.output.contains(secret))

      #expect(try await Command.odr(["http", "GET", server.url + "/x", "--key", "Nope"], environment: env).status == 3)
      #expect(try await Command.odr(["http", "GET", server.url + "/a b"], environment: env).status == 2)
      #expect(try await Command.odr(["http", "POST", server.url + "/x", "--data", "inline-secret"], environment: env).status == 2)
      await server.stop()
      #expect(try await Command.odr(["http", "GET", server.url + "/x", "--attempts", "1"], environment: env).status == 7)
    }
  }

  @Test func httpTakesCurlsOptionsLogsOnlyWhenAskedAndKeepsKeysOffPlainHTTP() async throws {
    let root = FileManager.default.temporaryDirectory.appending(path: "odr-http-curl-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    let bundle = "com.odr.curl.\(UUID().uuidString.prefix(8).lowercased())"
    let secret = "sk-\(UUID().uuidString)"
    try await TestHTTPServer.answering({ request in
      switch request.path {
      case "/echo-key": .text("denied for \(request.headers["x-api-key"] ?? "")", status: 403)
      default: TestHTTPServer.Reply(headers: ["X-Served": "yes"], body: Data("\(request.method) ua=\(request.headers["user-agent"] ?? "") a=\(request.headers["a"] ?? "") body=".utf8) + request.body)
      }
    }) { server in
      let env = try await fetchKeys(#"{"Local": {"value": "\#(secret)", "header": "X-Api-Key", "hosts": ["127.0.0.1:\#(server.port)"]}, "Remote": {"value": "\#(secret)-r", "header": "X-Api-Key", "hosts": ["api.example.invalid"]}}"#,
                                    bundle: bundle, root: root)
      defer { Command.odrInBackground(["delete", "--all"], environment: env) }

      // The method defaults to GET; odr says who it is; nothing is logged without -v.
      let get = try await Command.odr(["http", server.url + "/x"], environment: env)
      #expect(get.status == 0 && get.stderr.isEmpty, "\(get.stderr)")
      #expect(get.stdout == "GET ua=odr/0.1.0 a= body=")
      // -X -H -d -i -o, as curl spells them.
      try Data("payload".utf8).write(to: root.appending(path: "body.txt"))
      let out = root.appending(path: "out.txt")
      let post = try await Command.odr(["http", "-X", "POST", "-H", "A: b", "-d", "@" + root.appending(path: "body.txt").path, "-i", "-o", out.path,
                                               server.url + "/x"], environment: env)
      #expect(post.status == 0 && post.stdout.isEmpty, "\(post.stderr)")
      let written = try String(contentsOf: out, encoding: .utf8)
      #expect(written.hasPrefix("HTTP 200\r\n") && written.hasSuffix("POST ua=odr/0.1.0 a=b body=payload"))
      // -v: one line per event, odr's style, no timestamps.
      let verbose = try await Command.odr(["http", "-v", server.url + "/x"], environment: env)
      let lines = verbose.stderr.split(separator: "\n")
      #expect(lines.count >= 2 && lines.allSatisfy { $0.hasPrefix("odr: ") }, "\(verbose.stderr)")
      #expect(lines.contains { $0.contains("GET ") } && lines.contains { $0.contains("< HTTP 200") })
      // --fail-with-body: the body of an error, redacted of the key, and exit 7.
      let failed = try await Command.odr(["http", server.url + "/echo-key", "--key", "Local"], environment: env)
      #expect(failed.status == 7 && failed.stdout.isEmpty)
      let withBody = try await Command.odr(["http", "--fail-with-body", server.url + "/echo-key", "--key", "Local"], environment: env)
      #expect(withBody.status == 7)
      #expect(withBody.stdout.hasPrefix("denied for ") && !withBody.output.contains(secret), "\(withBody.output)")
      // A key over plain http to a host that is not loopback: refused before sending.
      let plain = try await Command.odr(["http", "http://api.example.invalid/v1", "--key", "Remote"], environment: env)
      #expect(plain.status == 2)
      #expect(plain.stderr.contains("plain http://") && plain.stderr.contains("insecure"), "\(plain.stderr)")
      #expect(try await Command.odr(["http", "-X", "GET", "POST", server.url], environment: env).status == 2)
    }
  }

  /// `odr` copied alone runs every command but `odr http`, which says what
  /// is missing; next to its helper in `libexec/odr/` (the shipped layout)
  /// or in the same folder (a build folder), it is handed over.
  /// `odr http -o` writes a body of any size in constant memory: 150 MB
  /// that arrive as 150 KB of gzip (it kept the whole body before: 644 MiB
  /// peak for 300 MB; now about 50 MiB, the runtime's own). The file appears only
  /// once complete, with no temporary left beside it; to stdout the body
  /// streams too, whole.
  @Test func httpWritesABodyOfAnySizeInConstantMemory() async throws {
    let root = FileManager.default.temporaryDirectory.appending(path: "odr-http-big-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }
    let bomb = root.appending(path: "bomb.gz")
    let made = try await Command.run("/bin/sh", ["-c", "head -c 150000000 /dev/zero | gzip -1 > '\(bomb.path)'"])
    try #require(made.status == 0, "\(made.stderr)")
    let body = try Data(contentsOf: bomb)
    try await TestHTTPServer.answering({ _ in TestHTTPServer.Reply(headers: ["Content-Encoding": "gzip"], body: body) }) { server in
      let out = root.appending(path: "body")
      let run = try await Command.run("/usr/bin/time", ["-f", "peak %M KiB", Paths.odr.path, "http", server.url + "/big", "-o", out.path])
      #expect(run.status == 0, "\(run.stderr)")
      let peak = try #require(run.stderr.split(separator: "\n").last { $0.hasPrefix("peak ") }.flatMap { Int($0.split(separator: " ")[1]) })
      #expect(peak < 100_000, "odr http -o peaked at \(peak) KiB")
      #expect(try FileManager.default.attributesOfItem(atPath: out.path)[.size] as? Int == 150_000_000)
      #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).sorted() == ["body", "bomb.gz"])
      let piped = try await Command.run("/bin/sh", ["-c", "'\(Paths.odr.path)' http '\(server.url)/big' | wc -c"])
      #expect(piped.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "150000000")
    }
  }

  @Test func odrHTTPFindsItsHelperOrSaysWhereItLooked() async throws {
    let root = FileManager.default.temporaryDirectory.appending(path: "odr-handoff-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    let alone = root.appending(path: "alone/bin/odr")
    try FileManager.default.createDirectory(at: alone.deletingLastPathComponent(), withIntermediateDirectories: true)
    try FileManager.default.copyItem(at: Paths.odr, to: alone)
    #expect(try await Command.run(alone.path, ["--version"]).status == 0)
    let missing = try await Command.run(alone.path, ["http", "GET", "http://127.0.0.1:9/"])
    #expect(missing.status == 1)
    #expect(missing.stderr.contains("needs its helper") && missing.stderr.contains("libexec/odr/odr-http"), "\(missing.stderr)")
    for helper in ["alone/libexec/odr/odr-http", "alone/bin/odr-http"] {
      let place = root.appending(path: helper)
      try FileManager.default.createDirectory(at: place.deletingLastPathComponent(), withIntermediateDirectories: true)
      try FileManager.default.copyItem(at: Paths.helper, to: place)
      let handed = try await Command.run(alone.path, ["http", "GET", "http://127.0.0.1:9/"])
      #expect(handed.status == 7, "\(helper): \(handed.stderr)")  // the helper ran: connection refused
      try FileManager.default.removeItem(at: place)
    }
  }
}
