import Foundation
import ODRProxy
import ODRProxyServer
import ODRCLITesting
import ODRTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `odr exec --proxy`, run as the built binary against the real keyring and
/// a real https API (nginx with a test CA): real clients (curl, Python's
/// urllib and requests, git) in the child, with only the variables odr
/// gives them.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct ProxyExecTests {
  /// One test's world: keys fetched into the keyring for a bundle of its
  /// own, the upstream, and the environment odr runs in.
  struct World {
    let root: URL
    let upstream: TestUpstream
    let env: [String: String]
    let bundle: String
    var secrets: [String] { [upstream.weather, upstream.maps, upstream.github, upstream.openai, upstream.slack, "loose-\(bundle)"] }
    /// The command's working folder: the one place of the test it sees and writes.
    var work: URL { root.appending(path: "work") }

    /// Runs `odr exec --proxy ARGS -- sh -c SCRIPT` in ``work``.
    func exec(_ script: String, _ arguments: [String] = []) async throws -> Command.Result {
      try await Command.odr(["exec", "--proxy"] + arguments + ["--", "/bin/sh", "-c", script], environment: env, in: work)
    }

    func end() {
      upstream.stop()
      try? FileManager.default.removeItem(at: root)  // best effort: the test is over
    }
  }

  static func world() async throws -> World {
    let root = FileManager.default.temporaryDirectory.appending(path: "odr-proxy-\(UUID().uuidString)")
    let bundle = "com.odr.proxy.\(UUID().uuidString.prefix(8).lowercased())"
    let upstream = try await TestUpstream.start(root: root, weather: "sk-\(UUID().uuidString)", maps: "mk-\(UUID().uuidString)")
    var env = KeyringSession.shared.environment
    env["HOME"] = root.appending(path: "home").path
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    env["XDG_DATA_HOME"] = root.appending(path: "data").path
    env["ODR_SERVICE"] = bundle
    env["SSL_CERT_FILE"] = upstream.trust.path
    env["TMPDIR"] = root.path
    let source = root.appending(path: "src")
    for folder in [source, root.appending(path: "home"), root.appending(path: "work")] {
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }
    try Data(#"{"bundle": "\#(bundle)", "tags": {"APIKeys": {"category": "prefetch", "secrets": true, "files": ["APIKeys.json"]}}}"#.utf8)
      .write(to: source.appending(path: "tags.json"))
    let keys = """
      {"keys": {"Weather": {"value": "\(upstream.weather)", "header": "Authorization", "scheme": "Bearer", "hosts": ["127.0.0.1"]},
                "Maps": {"value": "\(upstream.maps)", "query": "key", "hosts": ["127.0.0.1"]},
                "GitHub": {"value": "\(upstream.github)", "env": "GITHUB_TOKEN", "basic": "x-access-token", "hosts": ["127.0.0.1"]},
                "OpenAI": {"value": "\(upstream.openai)", "env": "OPENAI_API_KEY", "header": "Authorization", "scheme": "Bearer", "hosts": ["127.0.0.1"]},
                "Slack": {"value": "\(upstream.slack)", "env": "SLACK_BOT_TOKEN", "header": "Authorization", "scheme": "Bearer", "hosts": ["127.0.0.1"]},
                "Loose": {"value": "loose-\(bundle)", "header": "X-Key"}}}
      """
    try Data(keys.utf8).write(to: source.appending(path: "APIKeys.json"))
    for arguments in [["pack", source.path, "--output", root.appending(path: "pub").path, "--quiet", "--plaintext-secrets"],
                      ["fetch", "APIKeys", "--catalog", root.appending(path: "pub").path, "--quiet"]] {
      let result = try await Command.odr(arguments, environment: env)
      try #require(result.status == 0, "\(result.stderr)")
    }
    return World(root: root, upstream: upstream, env: env, bundle: bundle)
  }

  /// The audit lines odr wrote, parsed.
  static func auditLines(_ stderr: String) -> [[String: Any]] {
    stderr.split(separator: "\n").compactMap { line in
      line.hasPrefix("{") ? (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] : nil  // other lines are messages
    }
  }

  @Test func curlPythonAndGitReachTheBoundHostWithTheKeyAndTheChildNeverSeesIt() async throws {
    let world = try await Self.world()
    defer { world.end() }
    let origin = world.upstream.origin
    let script = """
      curl -sS "\(origin)/header" -H "Authorization: Bearer $WEATHER"
      curl -sS "\(origin)/query?key=$MAPS"
      curl -sS "\(origin)/echo" -H "Authorization: Bearer $WEATHER"
      python3 -c 'import os, urllib.request; print(urllib.request.urlopen(urllib.request.Request("\(origin)/header", headers={"Authorization": "Bearer " + os.environ["WEATHER"]})).read().decode().strip(), "(urllib)")'
      python3 -c 'import os, requests; print(requests.get("\(origin)/query", params={"key": os.environ["MAPS"]}).text.strip(), "(requests)")'
      git -c http.extraHeader="Authorization: Bearer $WEATHER" clone -q "\(origin)/repo.git" "$TMPDIR/clone-$$" && git -C "$TMPDIR/clone-$$" log --format=%s && rm -rf "$TMPDIR/clone-$$"
      echo "WEATHER=$WEATHER"
      tr '\\0' '\\n' < /proc/$$/environ
      """
    let result = try await world.exec(script)
    #expect(result.status == 0, "\(result.stderr)")
    let lines = result.stdout.split(separator: "\n").map(String.init)
    #expect(lines.prefix(6) == ["header reached", "query reached", lines[2], "header reached (urllib)", "query reached (requests)", "hello through the proxy"],
            "\(result.stdout)\n\(result.stderr)")
    // What the API echoed comes back as the placeholder the child holds.
    let placeholder = try #require(lines.first { $0.hasPrefix("WEATHER=") }).dropFirst("WEATHER=".count)
    // Shaped like the key (sk- and a UUID's form), not the key.
    #expect(placeholder.hasPrefix("sk-") && placeholder.count == world.upstream.weather.count && placeholder != world.upstream.weather, "\(placeholder)")
    #expect(lines[2] == "you sent Bearer \(placeholder)")
    for secret in world.secrets {
      #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret))
    }
    #expect(!result.stdout.contains("DBUS_SESSION_BUS_ADDRESS=") && !result.stdout.contains("ODR_SERVICE=") && !result.stdout.contains("XDG_RUNTIME_DIR="))
    #expect(result.stdout.contains("HTTPS_PROXY=http://odr:") && result.stdout.contains("REQUESTS_CA_BUNDLE=/run/odr/ca.pem"))
    #expect(result.stdout.contains("TMPDIR=/tmp\n") && result.stdout.contains("XDG_CACHE_HOME=\(world.root.path)/home/.cache\n"))
    #expect(result.stderr.contains("odr: left out Loose: it names no hosts, so no request may carry it."))
    #expect(!result.stderr.contains("without a sandbox"), "\(result.stderr)")
    // git asks without the proxy credentials first, as curl's "any" proxy
    // authentication does, and again with them after the 407.
    let lines407 = Self.auditLines(result.stderr).filter { $0["refusal"] != nil }
    #expect(lines407.allSatisfy { ($0["status"] as? Int) == 407 && ($0["process"] as? String)?.hasPrefix("git") == true }, "\(result.stderr)")
    let uses = Self.auditLines(result.stderr).filter { $0["refusal"] == nil }
    #expect(uses.count >= 6)
    #expect(uses.allSatisfy { ($0["status"] as? Int) == 200 && ($0["host"] as? String) == "127.0.0.1" })
    #expect(uses.contains { ($0["keys"] as? [String]) == ["Maps"] && ($0["path"] as? String) == "/query" })
    #expect(uses.contains { ($0["process"] as? String)?.hasPrefix("git-remote-http") == true || ($0["process"] as? String)?.hasPrefix("git") == true }, "\(result.stderr)")
    // Nothing of the run is left behind: the CA bundle was never a file outside.
    let left = try FileManager.default.contentsOfDirectory(atPath: world.root.path).filter { $0.hasPrefix("odr-proxy-") }
    #expect(left.isEmpty)
  }

  /// Real SDKs in a real agent session: the OpenAI SDK and `requests`
  /// send a conversation that quotes every placeholder of the run (as an
  /// agent's does once it has run `env`), turn after turn, and get their
  /// answers; Slack's SDK takes the `xoxb-` placeholder as a bot token.
  @Test func sdksSendAConversationQuotingEveryPlaceholderAndSlackTakesItsBotToken() async throws {
    let world = try await Self.world()
    defer { world.end() }
    var env = world.env
    env["API_BASE"] = world.upstream.origin
    let script = #"""
      import os, requests
      from openai import OpenAI
      from slack_sdk import WebClient
      placeholders = [os.environ[name] for name in ("OPENAI_API_KEY", "SLACK_BOT_TOKEN", "WEATHER", "MAPS", "GITHUB_TOKEN")]
      client = OpenAI(base_url=os.environ["API_BASE"] + "/v1", max_retries=0)
      conversation = [{"role": "user", "content": "my environment: " + " ".join(placeholders)}]
      for turn in range(3):
          answer = client.chat.completions.create(model="m", messages=conversation)
          conversation += [{"role": "assistant", "content": answer.choices[0].message.content}, {"role": "user", "content": "again: " + " ".join(placeholders)}]
      print("openai", len(conversation), answer.choices[0].message.content)
      print("requests", requests.post(os.environ["API_BASE"] + "/v1/chat/completions", json={"messages": conversation},
                                      headers={"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]}).status_code)
      token = os.environ["SLACK_BOT_TOKEN"]
      print("slack", WebClient(token=token, base_url=os.environ["API_BASE"] + "/api/").auth_test()["ok"], token.startswith("xoxb-"))
      """#
    try Data(script.utf8).write(to: world.work.appending(path: "agent.py"))
    let result = try await Command.odr(["exec", "--proxy", "--", "python3", "agent.py"], environment: env, in: world.work)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "openai 7 noted\nrequests 200\nslack True True\n", "\(result.stdout)\(result.stderr)")
    for secret in world.secrets { #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret)) }
    let notes = Self.auditLines(result.stderr).compactMap { $0["note"] as? String }
    #expect(notes.contains { $0.contains("placeholder of Weather in the body, not substituted") }, "\(result.stderr)")
  }

  /// A developer's own key, stored with `odr set --host --header`: proxied
  /// like a catalog's; listed as theirs; kept by `odr fetch --prune`; and a
  /// catalog key's metadata is not replaced without --force.
  @Test func aKeyOfYourOwnGoesThroughTheProxy() async throws {
    let world = try await Self.world()
    defer { world.end() }
    let set = try await Command.odr(["set", "Mine", "--host", "127.0.0.1", "--header", "Authorization", "--scheme", "Bearer", "--env", "MINE"],
                                    input: world.upstream.weather, environment: world.env)
    #expect(set.status == 0, "\(set.stderr)")
    let result = try await world.exec(#"curl -sS "\#(world.upstream.origin)/header" -H "Authorization: Bearer $MINE""#, ["--only", "Mine"])
    #expect(result.stdout == "header reached\n", "\(result.stdout)\(result.stderr)")
    let listed = try await Command.odr(["list", "--long", "--json"], environment: world.env)
    let keys = (try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])?["keys"] as? [[String: Any]] ?? []
    let from = Dictionary(uniqueKeysWithValues: keys.compactMap { key in (key["name"] as? String).map { ($0, key["metadataFrom"] as? String ?? "-") } })
    #expect(from["Mine"] == "you" && from["Weather"] == "catalog", "\(listed.stdout)")
    let overwrite = try await Command.odr(["set", "Weather", "--host", "evil.example", "--header", "X-Key"], input: "v", environment: world.env)
    #expect(overwrite.status == 1 && overwrite.stderr.contains("Weather of \(world.bundle) has metadata from its catalog") && overwrite.stderr.contains("--force"),
            "\(overwrite.stderr)")
    let refetched = try await Command.odr(["fetch", "APIKeys", "--prune", "--catalog", world.root.appending(path: "pub").path], environment: world.env)
    #expect(refetched.status == 0 && !refetched.stdout.contains("Mine"), "\(refetched.stdout)\(refetched.stderr)")
    #expect(try await Command.odr(["get", "Mine"], environment: world.env).stdout == world.upstream.weather)
    let incomplete = try await Command.odr(["set", "Half", "--host", "api.example"], input: "v", environment: world.env)
    #expect(incomplete.status == 2 && incomplete.stderr.contains("--header, --query or --basic"), "\(incomplete.stderr)")
    // An AWS credential's keys take hosts only (suffixes too): the proxy re-signs with them.
    for (name, variable) in [("AWSKeyID", "AWS_ACCESS_KEY_ID"), ("AWSSecret", "AWS_SECRET_ACCESS_KEY")] {
      let aws = try await Command.odr(["set", name, "--env", variable, "--host", ".amazonaws.com"], input: "v", environment: world.env)
      #expect(aws.status == 0, "\(aws.stderr)")
    }
    let long = try await Command.odr(["list", "--long"], environment: world.env)
    #expect(long.stdout.contains(".amazonaws.com"), "\(long.stdout)")
  }

  /// Basic authentication: git with the token in the URL and `curl -u`
  /// reach a server that checks it; the child holds the placeholder.
  @Test func gitWithTheTokenInItsURLAndCurlDashUUseBasicAuthentication() async throws {
    let world = try await Self.world()
    defer { world.end() }
    let port = world.upstream.port
    let result = try await world.exec(#"""
      curl -sS -u "x-access-token:$GITHUB_TOKEN" "https://127.0.0.1:\#(port)/basic"
      git ls-remote "https://x-access-token:$GITHUB_TOKEN@127.0.0.1:\#(port)/basic.git" | cut -f2
      git clone -q "https://x-access-token:$GITHUB_TOKEN@127.0.0.1:\#(port)/basic.git" clone && git -C clone log --format=%s
      curl -s -o /dev/null -w '%{http_code}\n' -u "someone:$GITHUB_TOKEN" "https://127.0.0.1:\#(port)/basic"
      """#)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.split(separator: "\n") == ["basic reached", "HEAD", "refs/heads/main", "hello through the proxy", "401"], "\(result.stdout)\(result.stderr)")
    for secret in world.secrets { #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret)) }
    let uses = Self.auditLines(result.stderr).filter { ($0["keys"] as? [String]) == ["GitHub"] }
    #expect(uses.count >= 3, "\(result.stderr)")
    #expect(result.stderr.contains("placeholder of GitHub in the Authorization header, not substituted"), "\(result.stderr)")
  }

  /// A large answer (3 MiB, flushed to the child every 64 KiB) arrives
  /// whole, each value in it masked, one across every flush boundary too;
  /// a streamed answer (nginx sends 8 KiB a second) reaches the child as it
  /// comes: the proxy does not hold parts back for a fuller write.
  @Test func largeAndStreamedAnswersArriveWholeMaskedAndAsTheyCome() async throws {
    let world = try await Self.world()
    defer { world.end() }
    var body = Data()
    var values = 0
    while body.count < 3 << 20 {
      // the value ends 5 bytes past every 64 KiB boundary, and starts mid-block between them
      let boundary = (body.count / 65_536 + 1) * 65_536
      body.append(Data(repeating: UInt8(ascii: "x"), count: boundary - body.count - world.upstream.weather.utf8.count + 5))
      body.append(Data(world.upstream.weather.utf8))
      body.append(Data(repeating: UInt8(ascii: "y"), count: 30_000))
      body.append(Data(world.upstream.weather.utf8))
      values += 2
    }
    try body.write(to: world.upstream.root.appending(path: "www/big.txt"))
    try Data(repeating: UInt8(ascii: "s"), count: 256 << 10).write(to: world.upstream.root.appending(path: "www/slow.txt"))
    let result = try await world.exec(#"""
      curl -sS "\#(world.upstream.origin)/big.txt" -o big.out && echo "$WEATHER"
      curl -sS --max-time 1 "\#(world.upstream.origin)/slow.txt" -o slow.out; echo "curl $?"; wc -c < slow.out
      date +%s.%N
      """#)
    let ended = Date()
    let lines = result.stdout.split(separator: "\n").map(String.init)
    try #require(lines.count == 4, "\(result.stdout)\(result.stderr)")
    // odr ends with its command, though the slow answer was cut mid-way
    // (it once waited 5 s for that server's TLS close).
    let childEnded = Date(timeIntervalSince1970: Double(lines[3]) ?? 0)
    #expect(ended.timeIntervalSince(childEnded) < 2.5, "odr ended \(ended.timeIntervalSince(childEnded)) s after its command")
    let received = try Data(contentsOf: world.work.appending(path: "big.out"))
    let expected = String(decoding: body, as: UTF8.self).replacingOccurrences(of: world.upstream.weather, with: lines[0])
    #expect(received.count == expected.utf8.count && String(decoding: received, as: UTF8.self) == expected, "\(received.count) of \(expected.utf8.count) bytes, \(values) values")
    let streamed = Int(lines[2].trimmingCharacters(in: .whitespaces)) ?? 0
    #expect(lines[1] == "curl 28" && streamed > 0 && streamed < 256 << 10, "\(result.stdout)\(result.stderr)")
  }

  /// A placeholder anywhere its key does not go is sent on as it is
  /// (worthless there) and said in the audit log; a misdirected request, a
  /// request without the token and the machine's own loopback are refused.
  @Test func aPlaceholderElsewhereGoesOnAsItIsAndMisdirectedOrTokenlessRequestsAreRefused() async throws {
    let world = try await Self.world()
    defer { world.end() }
    let origin = world.upstream.origin
    let code = "curl -s -o /dev/null -w '%{http_code}\\n'"
    let script = """
      \(code) "\(origin)/header/$WEATHER"
      \(code) "\(origin)/header" -H "X-Other: $WEATHER"
      \(code) "\(origin)/header" -H "Authorization: Bearer $WEATHER" -H "Host: evil.example"
      \(code) "\(origin)/header" --data "token=$WEATHER"
      \(code) "\(origin)/header?token=$WEATHER"
      \(code) -x "http://127.0.0.1:${HTTPS_PROXY##*:}" "\(origin)/header"
      curl -s -D - -o /dev/null -x "http://127.0.0.1:${HTTPS_PROXY##*:}" "http://127.0.0.1:9/" | tr -d '\\r' | grep -i '^proxy-authenticate'
      \(code) "\(origin)/gzip" -H "Authorization: Bearer $WEATHER"
      \(code) "\(origin)/header"
      \(code) -k "https://localhost:\(world.upstream.port)/header" -H "Authorization: Bearer $WEATHER"
      \(code) -X OPTIONS --request-target '*' "\(origin)/"
      """
    let result = try await world.exec(script)
    #expect(result.status == 0, "\(result.stderr)")
    // The placeholders elsewhere reach the API as they are: it finds no key (404, 401).
    #expect(result.stdout.split(separator: "\n") == ["404", "401", "421", "401", "401", "000", #"Proxy-Authenticate: Basic realm="odr""#, "502", "401", "000", "400"],
            "\(result.stdout)\n\(result.stderr)")
    let lines = Self.auditLines(result.stderr)
    let notes = lines.compactMap { $0["note"] as? String }
    #expect(notes == ["placeholder of Weather in the path, not substituted", "placeholder of Weather in the X-Other header, not substituted",
                      "placeholder of Weather in the body, not substituted", "placeholder of Weather in the query parameter token, not substituted"],
            "\(result.stderr)")
    // A client that asks without the token is not a refusal (clients probe so).
    let refusals = lines.filter { $0["refusal"] != nil }
    #expect(refusals.map { $0["status"] as? Int } == [421, 502, 403, 400], "\(result.stderr)")
    #expect((refusals[1]["refusal"] as? String)?.contains("is encoded (gzip), which odr cannot mask") == true)
    #expect((refusals[2]["refusal"] as? String)?.contains("is the machine's own loopback") == true, "\(refusals[2])")
    for secret in world.secrets { #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret)) }
    let requests = try await world.upstream.nginx.settledRequests()
    #expect(requests.map(\.path) == ["/header/\(try #require(lines.first?["path"] as? String).dropFirst("/header/".count))", "/header", "/header", "/header",
                                      "/gzip", "/header"], "\(requests)")
  }

  @Test func theChildCannotReachTheKeyringEvenWhenItFindsTheBus() async throws {
    let world = try await Self.world()
    defer { world.end() }
    let bus = KeyringSession.shared.busAddress
    // odr itself, where the command can run it.
    try FileManager.default.copyItem(at: Paths.odr, to: world.work.appending(path: "odr"))
    let script = """
      ./odr get Weather --service \(world.bundle); echo "odr get: $?"
      DBUS_SESSION_BUS_ADDRESS='\(bus)' ./odr get Weather --service \(world.bundle); echo "odr get on the bus: $?"
      DBUS_SESSION_BUS_ADDRESS='\(bus)' secret-tool lookup service \(world.bundle) key Weather; echo "secret-tool: $?"
      DBUS_SESSION_BUS_ADDRESS='\(bus)' python3 -c 'import secretstorage; c = secretstorage.dbus_init(); print([i.get_secret() for i in secretstorage.search_items(c, {"service": "\(world.bundle)"})])'; echo "secretstorage: $?"
      keyctl show @s >/dev/null 2>&1; echo "keyctl: $?"
      """
    let result = try await world.exec(script)
    #expect(result.status == 0, "\(result.stderr)")
    for secret in world.secrets { #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret)) }
    for check in ["odr get: ", "odr get on the bus: ", "secret-tool: ", "secretstorage: ", "keyctl: "] {
      let line = result.stdout.split(separator: "\n").first { $0.hasPrefix(check) }
      #expect(line != nil && line != "\(check)0", "\(check): \(result.stdout)\n\(result.stderr)")
    }
    // The same lookup outside works: the keys are there, the child is kept from them.
    let outside = try await Command.secretTool(["lookup", "service", world.bundle, "key", "Weather"], environment: world.env)
    #expect(outside.stdout == world.upstream.weather)
  }

  @Test func aCoreDumpOfTheChildHoldsNoValue() async throws {
    let world = try await Self.world()
    defer { world.end() }
    let core = world.work.appending(path: "core")
    let script = """
      python3 -c 'import os, subprocess, urllib.request
      answer = urllib.request.urlopen(urllib.request.Request("\(world.upstream.origin)/echo", headers={"Authorization": "Bearer " + os.environ["WEATHER"]})).read()
      subprocess.run(["gcore", "-o", "\(core.path)", str(os.getpid())], check=True, capture_output=True)
      print(answer.decode().strip())'
      """
    let result = try await world.exec(script)
    #expect(result.status == 0, "\(result.stderr)")
    let dumps = try FileManager.default.contentsOfDirectory(atPath: world.work.path).filter { $0.hasPrefix("core.") }
    try #require(dumps.count == 1)
    let bytes = try Data(contentsOf: world.work.appending(path: dumps[0]))
    #expect(bytes.count > 100_000)
    // The answer is still referenced when the dump is taken: the dump is of the process that made the request.
    #expect(bytes.range(of: Data("you sent Bearer sk-".utf8)) != nil)
    for secret in world.secrets { #expect(bytes.range(of: Data(secret.utf8)) == nil) }
  }

  /// On a terminal the audit lines go to a file of the run's own (0600),
  /// named once, not over the command's output; `--proxy-log -` keeps them
  /// on stderr.
  @Test func onATerminalTheAuditLinesGoToAFileOfTheRunsOwn() async throws {
    let world = try await Self.world()
    defer { world.end() }
    let command = "cd '\(world.work.path)' && '\(Paths.odr.path)' exec --proxy -- sh -c 'curl -s -o /dev/null \(world.upstream.origin)/header -H \"Authorization: Bearer $WEATHER\"'"
    let terminal = try await Command.run("/usr/bin/script", ["-qec", command, "/dev/null"], environment: world.env)
    #expect(terminal.status == 0, "\(terminal.stdout)")
    let folder = world.root.appending(path: "state/odr/proxy")
    let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
    try #require(files.count == 1, "\(files)")
    let file = folder.appending(path: files[0])
    #expect(terminal.stdout.contains("odr: the proxy's audit lines go to \(file.path)") && !terminal.stdout.contains("{\"host\""), "\(terminal.stdout)")
    #expect(try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int == 0o600)
    let lines = Self.auditLines(try String(contentsOf: file, encoding: .utf8))
    #expect(lines.count == 1 && (lines.first?["keys"] as? [String]) == ["Weather"], "\(lines)")
    let dash = try await Command.run("/usr/bin/script", ["-qec", command.replacingOccurrences(of: "--proxy --", with: "--proxy --proxy-log - --"), "/dev/null"],
                                     environment: world.env)
    #expect(dash.stdout.contains("\"keys\":[\"Weather\"]") && !dash.stdout.contains("audit lines go to"), "\(dash.stdout)")
  }

  @Test func aBaseURLForwardsToItsOriginForHoldersOfTheToken() async throws {
    let world = try await Self.world()
    defer { world.end() }
    let script = """
      echo "$API_BASE_URL"
      curl -sS "$API_BASE_URL/header" -H "Authorization: Bearer $WEATHER"
      curl -s -o /dev/null -w '%{http_code}\\n' "http://127.0.0.1:${HTTPS_PROXY##*:}/API/header" -H "Authorization: Bearer $WEATHER"
      curl -s -o /dev/null -w '%{http_code}\\n' "$API_BASE_URL/$WEATHER" -H "Authorization: Bearer $WEATHER"
      """
    let result = try await world.exec(script, ["--proxy-base", "API=\(world.upstream.origin)", "--only", "Weather"])
    #expect(result.status == 0, "\(result.stderr)")
    let lines = result.stdout.split(separator: "\n").map(String.init)
    #expect(lines.count == 4 && lines[0].hasPrefix("http://127.0.0.1:") && lines[0].hasSuffix("/API"))
    // Without the token in its path: refused; a placeholder in the path goes on (404).
    #expect(lines.dropFirst() == ["header reached", "403", "404"], "\(result.stdout)\n\(result.stderr)")
    // The audit lines name the origin's path, never the run's token.
    let token = try #require(lines.first?.split(separator: "/").dropLast().last)
    #expect(result.stderr.contains(#""path":"/sk-"#) && !result.stderr.contains(token), "\(result.stderr)")
    let bad = try await Command.odr(["exec", "--proxy", "--proxy-base", "api=ftp://x", "--", "true"], environment: world.env)
    #expect(bad.status == 2 && bad.stderr.contains("--proxy-base api: a base's name is upper case letters"), "\(bad.stderr)")
    // Only keys without hosts: nothing could go through, and the message says why.
    let loose = try await Command.odr(["exec", "--proxy", "--only", "Loose", "--", "true"], environment: world.env)
    #expect(loose.status == 3 && loose.stderr.hasPrefix("odr: No key can go through the proxy: Loose names no hosts."), "\(loose.stderr)")
  }

  /// odr's processes and the sandbox's (bwrap, its first process, the
  /// command): pids from /proc, outside the sandbox's pid namespace.
  static func descendants(of root: pid_t) -> [pid_t] {
    var children: [pid_t: [pid_t]] = [:]
    for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {  // none: no processes seen
      guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),  // gone meanwhile
            let close = stat.lastIndex(of: ")"), let parent = pid_t(stat[stat.index(after: close)...].split(separator: " ")[1]) else { continue }
      children[parent, default: []].append(pid)
    }
    var result: [pid_t] = []
    var queue = children[root] ?? []
    while let pid = queue.popLast() {
      result.append(pid)
      queue += children[pid] ?? []
    }
    return result
  }

  /// A process that has exited (gone, or a zombie not yet reaped).
  static func ended(_ pid: pid_t) -> Bool {
    kill(pid, 0) != 0 || (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.contains(") Z ") == true  // gone meanwhile
  }

  @Test func theChildEndsWithOdrAndOdrWithTheChild() async throws {
    let world = try await Self.world()
    defer { world.end() }
    for signal in [SIGTERM, SIGINT, SIGKILL] {
      let marks = world.work.appending(path: "marks-\(signal)")
      let process = Process()
      process.executableURL = Paths.odr
      process.currentDirectoryURL = world.work
      process.arguments = ["exec", "--proxy", "--", "/bin/sh", "-c", "echo $$ > \(marks.path).tmp; mv \(marks.path).tmp \(marks.path); exec sleep 60"]
      process.environment = world.env
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.run()
      // Waits (bounded) for the command to say it runs.
      var text: String?
      for _ in 0..<1000 where text == nil {
        text = try? String(contentsOf: marks, encoding: .utf8)  // not there yet
        if text == nil { try await Task.sleep(for: .milliseconds(10)) }
      }
      // Its pid inside the sandbox's own pid namespace: bwrap's first process is 1.
      #expect(text?.trimmingCharacters(in: .whitespacesAndNewlines) == "2", "\(text ?? "no mark")")
      let tree = Self.descendants(of: process.processIdentifier)
      // bwrap, the sandbox's first process and the command (and maybe its `mv`, not reaped yet)
      #expect(tree.count >= 3, "\(tree)")
      kill(process.processIdentifier, signal)
      process.waitUntilExit()
      // Every process of the sandbox is gone (SIGTERM, SIGINT: forwarded to
      // the command; SIGKILL: the parent-death signals).
      var gone = false
      for _ in 0..<500 where !gone {
        gone = tree.allSatisfy(Self.ended)
        if !gone { try await Task.sleep(for: .milliseconds(10)) }
      }
      #expect(gone, "signal \(signal): \(tree.filter { !Self.ended($0) }) still run")
      if signal != SIGKILL {
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == signal)
      }
    }
  }
}
