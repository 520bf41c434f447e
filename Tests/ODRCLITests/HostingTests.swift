import Foundation
import ODRCatalog
import ODRCLITesting
import ODRTesting
import Testing

/// Offline first, revalidation, resume and mirrors against a real nginx
/// (Debian's) on 127.0.0.1, with the built `odr` (docs/design.md, "Local store", §10).
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(3))) struct HostingTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-hosting-\(UUID().uuidString)")
  var store: URL { root.appending(path: "cache/odr/com.example.demo") }
  var published: URL { root.appending(path: "pub") }

  /// Publishes the Demo sample, with a tag of `bigBytes` when asked.
  func publish(bigBytes: Int = 0, version: Int = 3) async throws -> String? {
    let source = root.appending(path: "src")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    try FileManager.default.copyItem(at: Paths.packageRoot.appending(path: "resources/Demo"), to: source)
    var sha: String?
    if bigBytes > 0 {
      try await BigFile.write(source.appending(path: "movies/intro.bin"), size: bigBytes, fill: 0x5a)
      var tags = try String(contentsOf: source.appending(path: "tags.json"), encoding: .utf8)
      tags = tags.replacingOccurrences(of: #""tags": {"#, with: #""tags": { "Movie": { "category": "onDemand", "files": ["movies/"] },"#)
      try tags.write(to: source.appending(path: "tags.json"), atomically: true, encoding: .utf8)
      sha = try FileIO.sha256(of: source.appending(path: "movies/intro.bin")).sha256
    }
    let pack = try await Command.odr(["pack", source.path, "--output", published.path, "--quiet", "--plaintext-secrets", "--catalog-version", "\(version)"])
    try #require(pack.status == 0, "\(pack.stderr)")
    try FileManager.default.removeItem(at: source)
    return sha
  }

  /// The sample published, served by nginx, and Level2 begun from it: where
  /// the hosting tests start. The caller stops nginx.
  func servedAndBegun() async throws -> (nginx: Nginx, environment: [String: String]) {
    _ = try await publish()
    let nginx = try await Nginx.start(root: published)
    let env = environment([nginx.url.absoluteString])
    #expect(try await Command.odr(["begin", "Level2", "--quiet"], environment: env).status == 0)
    try await nginx.settle()  // begin's requests all in the log: later counts start from them
    return (nginx, env)
  }

  func environment(_ catalogs: [String]) -> [String: String] {
    var env = KeyringSession.shared.environment
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    env["ODR_CATALOG"] = catalogs.joined(separator: ",")
    env["ODR_SERVICE"] = nil
    return env
  }

  /// An https host whose certificate only the user's `SSL_CERT_FILE`
  /// trusts (a private CA, as curl reads it): odr downloads from it with
  /// the file, and without it the handshake is refused and said so.
  @Test func anHTTPSHostTrustedThroughSSLCertFileServes() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    _ = try await publish()
    let (certificate, key) = (root.appending(path: "tls.pem"), root.appending(path: "tls.key"))
    let made = try await Command.run("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                                          "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                                                          "-keyout", key.path, "-out", certificate.path])
    try #require(made.status == 0, "\(made.stderr)")
    let nginx = try await Nginx.start(root: published, tls: (certificate, key))
    defer { nginx.stop() }
    var env = environment([nginx.url.absoluteString])
    env["SSL_CERT_FILE"] = nil
    let untrusted = try await Command.odr(["begin", "Level2", "--quiet"], environment: env, process: true)
    #expect(untrusted.status == 7 && untrusted.stderr.contains("TLS handshake"), "\(untrusted.stderr)")
    env["SSL_CERT_FILE"] = certificate.path
    let trusted = try await Command.odr(["begin", "Level2", "--quiet"], environment: env, process: true)
    #expect(trusted.status == 0, "\(trusted.stderr)")
    #expect(FileManager.default.fileExists(atPath: store.path))
  }

  @Test func withTheServerDownCommandsAnsweredFromDiskStillWorkAtOnce() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let (nginx, env) = try await servedAndBegun()
    // Answered from disk: not one request.
    let before = try await nginx.settledRequests().count
    for arguments in [["path", "Level2"], ["status"], ["end", "Level2"]] {
      let result = try await Command.odr(arguments, environment: env)
      #expect(result.status == 0, "\(arguments) \(result.stderr)")
    }
    let after = try await nginx.settledRequests()
    #expect(after.count == before, "\(after.dropFirst(before))")
    nginx.stop()  // the port now refuses connections
    for arguments in [["path", "Level2"], ["status", "--json"], ["end", "Level2"]] {
      let result = try await Command.odr(arguments, environment: env, exclusive: true)
      #expect(result.status == 0, "\(arguments) \(result.stderr)")
      #expect(result.duration < .seconds(1), "\(arguments) took \(result.duration)")
    }
    let begin = try await Command.odr(["begin", "Level2", "--quiet"], environment: env)
    #expect(begin.status == 0, "\(begin.stderr)")
    let warnings = begin.stderr.split(separator: "\n")
    #expect(warnings.count == 1 && warnings[0].contains("connection refused") && warnings[0].contains("kept on disk"), "\(begin.stderr)")
    let missing = try await Command.odr(["begin", "Onboarding"], environment: env, exclusive: true)
    #expect(missing.status == 7, "\(missing.stderr)")
    #expect(missing.stderr.contains("connection refused"))
    #expect(missing.duration < .seconds(1), "took \(missing.duration)")
  }

  @Test func aSecondRunRevalidatesTheCatalogWithA304() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let (nginx, env) = try await servedAndBegun()
    defer { nginx.stop() }
    #expect(try await Command.odr(["begin", "Level2", "--quiet"], environment: env).status == 0)
    let catalogs = try await nginx.requests(atLeast: 2) { $0.path == "/catalog.json" }
    #expect(catalogs.map(\.status) == [200, 304])
    #expect(catalogs.last?.bytes == 0)
    // A changed catalog is fetched again (and the unsigned one's .sig probed).
    // (A different size too: nginx's ETag is the file's mtime and size, and
    // this runs within the same second.)
    try FileManager.default.removeItem(at: published)
    _ = try await publish(version: 40)
    #expect(try await Command.odr(["begin", "Onboarding", "--quiet"], environment: env).status == 0)
    #expect(try await nginx.requests(atLeast: 3) { $0.path == "/catalog.json" }.map(\.status) == [200, 304, 200])
  }

  @Test func statusSaysItShowsTheKeptCatalogAndRefreshAsksTheHost() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let (nginx, env) = try await servedAndBegun()
    defer { nginx.stop() }
    // Backdate the last confirmation by two hours: status says how old its copy is.
    let kept = store.appending(path: "catalog.json")
    try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-7300)], ofItemAtPath: kept.path)
    try FileManager.default.removeItem(at: published)
    _ = try await publish(version: 40)
    let requests = try await nginx.settledRequests().count
    let stale = try await Command.odr(["status"], environment: env)
    let settled = try await nginx.settledRequests()
    #expect(stale.status == 0 && settled.count == requests, "\(settled.dropFirst(requests))")
    #expect(stale.stderr.hasPrefix("com.example.demo version 3, store "), "\(stale.stderr)")
    #expect(stale.stderr.contains("\nthe catalog kept on disk, last confirmed by its host 2 hours ago; `odr status --refresh` asks the host now\n"), "\(stale.stderr)")
    let json = try JSONSerialization.jsonObject(with: Data(try await Command.odr(["status", "--json"], environment: env).stdout.utf8)) as? [String: Any]
    #expect(json?["checked"] is String)
    let refreshed = try await Command.odr(["status", "--refresh"], environment: env)
    #expect(refreshed.status == 0, "\(refreshed.stderr)")
    #expect(refreshed.stderr.hasPrefix("com.example.demo version 40, store ") && !refreshed.stderr.contains("last confirmed"), "\(refreshed.stderr)")
    #expect(try await nginx.requests(atLeast: 2) { $0.path == "/catalog.json" }.count == 2)
    let after = try await Command.odr(["status"], environment: env)
    #expect(after.stderr.contains("version 40") && after.stderr.contains("last confirmed by its host less than a minute ago"), "\(after.stderr)")
    #expect(try await Command.odr(["status", "--refresh", "--offline"], environment: env).status == 2)
  }

  @Test func aNeverLoadedCatalogOnARefusedPortFailsFastAndA404SaysCheckTheURL() async throws {
    _ = try await publish()
    defer { try? FileManager.default.removeItem(at: root) }
    let refused = try await Command.odr(["begin", "Level2"], environment: environment(["http://127.0.0.1:\(try Nginx.freePort())/"]), exclusive: true)
    #expect(refused.status == 7)
    #expect(refused.duration < .seconds(1), "took \(refused.duration)")
    #expect(refused.stderr.contains("connection refused"), "\(refused.stderr)")
    let nginx = try await Nginx.start(root: published)
    defer { nginx.stop() }
    let missing = try await Command.odr(["begin", "Level2"], environment: environment([nginx.url.absoluteString + "nope/"]))
    #expect(missing.status == 3)
    #expect(missing.stderr.contains("404") && missing.stderr.contains("Check the --catalog URL"), "\(missing.stderr)")
    let tls = try await Command.odr(["begin", "Level2"], environment: environment(["https://127.0.0.1:\(nginx.port)/"]))
    #expect(tls.status == 7)
    #expect(tls.stderr.contains("TLS handshake") && tls.stderr.split(separator: "\n").count == 1, "\(tls.stderr)")
    // A name DNS does not know (.invalid never resolves, RFC 6761): said in words, for S3 with where its endpoint comes from.
    let unknown = try await Command.odr(["begin", "Level2"], environment: environment(["https://odr-test.invalid/"]))
    #expect(unknown.status == 7)
    #expect(unknown.stderr.hasPrefix("odr: The host odr-test.invalid does not resolve (DNS knows no such name); nothing was installed."), "\(unknown.stderr)")
    var s3 = environment(["s3://bucket/prefix"])
    s3.merge(["AWS_ENDPOINT_URL": "http://odr-s3.invalid:9000", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"]) { $1 }
    let bucket = try await Command.odr(["begin", "Level2"], environment: s3)
    #expect(bucket.status == 7 && bucket.stderr.contains("The host odr-s3.invalid does not resolve (DNS knows no such name); check the S3 endpoint (AWS_ENDPOINT_URL"), "\(bucket.stderr)")
    #expect(!bucket.stderr.contains("SocketAddressError"))
  }

  /// Starts `odr begin Movie` and kills it once `fraction` of the blob is on disk.
  func killMidway(_ env: [String: String], sha: String, size: Int, fraction: Double) async throws {
    try await Command.offPool { try killMidwayNow(env, sha: sha, size: size, fraction: fraction) }
  }

  func killMidwayNow(_ env: [String: String], sha: String, size: Int, fraction: Double) throws {
    let process = Process()
    process.executableURL = Paths.odr
    process.arguments = ["begin", "Movie", "--quiet"]
    process.environment = env
    process.standardError = FileHandle.nullDevice
    try process.run()
    let partial = store.appending(path: "partial/\(sha)")
    for _ in 0..<5000 where ((try? FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? Int) ?? 0) < Int(Double(size) * fraction) {
      guard process.isRunning else { break }
      usleep(2_000)
    }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    #expect(process.terminationReason == .uncaughtSignal, "odr finished before it could be killed")
  }

  func blobIsInstalled(_ sha: String) async throws -> Bool {
    try FileIO.sha256(of: store.appending(path: "blobs/\(sha)")).sha256 == sha
  }

  @Test func aKilledDownloadResumesWhereItStopped() async throws {
    let size = 8 << 20
    let sha = try #require(try await publish(bigBytes: size))
    defer { try? FileManager.default.removeItem(at: root) }
    let nginx = try await Nginx.start(root: published, rate: "2m")
    defer { nginx.stop() }
    let env = environment([nginx.url.absoluteString])
    try await killMidway(env, sha: sha, size: size, fraction: 0.5)
    #expect(try await nginx.logged(pathEndingWith: sha))
    let killed = try await nginx.settledRequests().filter { $0.path.hasSuffix(sha) }.count
    let rerun = try await Command.odr(["begin", "Movie"], environment: env)
    #expect(rerun.status == 0, "\(rerun.stderr)")
    #expect(rerun.stderr.hasPrefix("odr: resuming movies/intro.bin at ") && rerun.stderr.contains(" of 8.0 MiB (kept from an interrupted download)\n"), "\(rerun.stderr)")
    // nginx logs a request a moment after its answer: wait for the blob's own line (the catalog's comes first).
    let resumed = try await nginx.requests(atLeast: killed + 1) { $0.path.hasSuffix(sha) }.dropFirst(killed)
    #expect(resumed.map(\.status) == [206])
    let fraction = Double(resumed.reduce(0) { $0 + $1.bytes }) / Double(size)
    #expect(fraction <= 0.55, "re-downloaded \(fraction) of the blob")
    #expect(try await blobIsInstalled(sha))
    #expect(((try? FileManager.default.contentsOfDirectory(atPath: store.appending(path: "partial").path)) ?? []).isEmpty)
  }

  @Test func ctrlCOnATerminalClearsTheBarSaysHowToResumeAndPinsNothing() async throws {
    let size = 8 << 20
    let sha = try #require(try await publish(bigBytes: size))
    defer { try? FileManager.default.removeItem(at: root) }
    let nginx = try await Nginx.start(root: published, rate: "2m")
    defer { nginx.stop() }
    var env = environment([nginx.url.absoluteString])
    env["TERM"] = "xterm"
    let terminalEnvironment = env
    // On a pseudo-terminal (`script`), Ctrl-C typed once a quarter is on disk.
    let output = try await Command.offPool { () throws -> (status: Int32, text: String) in
      let process = Process()
      process.executableURL = URL(filePath: "/usr/bin/script")
      process.arguments = ["-qec", "\(Paths.odr.path) begin Movie", "/dev/null"]
      process.environment = terminalEnvironment
      let input = Pipe(), output = Pipe()
      process.standardInput = input
      process.standardOutput = output
      try process.run()
      let partial = store.appending(path: "partial/\(sha)")
      for _ in 0..<5000 where ((try? FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? Int) ?? 0) < size / 4 {
        guard process.isRunning else { break }
        usleep(2_000)
      }
      try input.fileHandleForWriting.write(contentsOf: Data([0x03]))  // a child gone already fails the test, not the run
      let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      process.waitUntilExit()
      return (process.terminationStatus, text)
    }
    #expect(output.status == 130, "\(output.text)")
    // The bar is cleared, then one line says where it stopped and what resumes it.
    let line = try #require(output.text.split(separator: "\r\n").last.map(String.init))
    #expect(line.contains("\u{1b}[2Kodr: interrupted at ") && line.contains(" of 8.0 MiB; nothing was pinned. `odr begin Movie` resumes from the ")
            && line.hasSuffix(" MiB kept."), "\(output.text)")
    let status = try JSONSerialization.jsonObject(with: Data(try await Command.odr(["status", "--json"], environment: env).stdout.utf8)) as? [String: Any]
    let movie = (status?["tags"] as? [[String: Any]])?.first { $0["name"] as? String == "Movie" }
    #expect(movie?["pins"] as? Int == 0 && movie?["onDisk"] as? Bool == false)
    let rerun = try await Command.odr(["begin", "Movie"], environment: env)
    #expect(rerun.status == 0 && rerun.stderr.hasPrefix("odr: resuming movies/intro.bin at "), "\(rerun.stderr)")
    #expect(try await nginx.settledRequests().last { $0.path.hasSuffix(sha) }?.status == 206)
  }

  @Test func aServerThatIgnoresRangesGetsTheWholeBlobAgain() async throws {
    let size = 2 << 20
    let sha = try #require(try await publish(bigBytes: size))
    defer { try? FileManager.default.removeItem(at: root) }
    let slow = try await Nginx.start(root: published, rate: "512k")
    try await killMidway(environment([slow.url.absoluteString]), sha: sha, size: size, fraction: 0.4)
    slow.stop()
    let plain = try await Nginx.start(root: published, maxRanges: 0)
    defer { plain.stop() }
    let rerun = try await Command.odr(["begin", "Movie"], environment: environment([plain.url.absoluteString]))
    #expect(rerun.status == 0, "\(rerun.stderr)")
    #expect(rerun.stderr.hasPrefix("odr: the server does not resume movies/intro.bin (it ignores ranges, or the file changed): starting over; "), "\(rerun.stderr)")
    #expect(try await plain.settledRequests().filter { $0.path.hasSuffix(sha) }.map(\.status) == [200])
    #expect(try await blobIsInstalled(sha))
  }

  @Test(arguments: ["dead port", "HTTP 500"])
  func whenThePrimaryMirrorFailsTheSecondServes(_ failure: String) async throws {
    _ = try await publish(bigBytes: 8 << 20)
    defer { try? FileManager.default.removeItem(at: root) }
    let broken = failure == "HTTP 500" ? try await Nginx.start(root: published, status: 500) : nil
    defer { broken?.stop() }
    let deadPort = try Nginx.freePort()
    let primary = broken?.url.absoluteString ?? "http://127.0.0.1:\(deadPort)/"
    let second = try await Nginx.start(root: published)
    defer { second.stop() }
    let result = try await Command.odr(["begin", "Movie", "Level2", "--quiet"], environment: environment([primary, second.url.absoluteString]), exclusive: true)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.duration < .seconds(2), "took \(result.duration)")
    #expect(result.stderr.contains("using the next one"), "\(result.stderr)")
    // Skipped for the rest of the run: the broken one was asked once.
    #expect((try await broken?.requests(atLeast: 1).count ?? 1) == 1)
    #expect(try await second.settledRequests().contains { $0.path.hasPrefix("/blobs/") && $0.status == 200 })
  }

  @Test func aMirrorServingADamagedBlobIsSkippedForTheNext() async throws {
    let sha = try #require(try await publish(bigBytes: 1 << 20))
    defer { try? FileManager.default.removeItem(at: root) }
    let damaged = root.appending(path: "damaged")
    try FileManager.default.copyItem(at: published, to: damaged)
    let blob = damaged.appending(path: "blobs/\(sha)")
    var bytes = try Data(contentsOf: blob)
    bytes[bytes.count / 2] ^= 0x01
    try bytes.write(to: blob)
    let bad = try await Nginx.start(root: damaged)
    defer { bad.stop() }
    let good = try await Nginx.start(root: published)
    defer { good.stop() }
    let result = try await Command.odr(["begin", "Movie", "Level2", "--quiet"], environment: environment([bad.url.absoluteString, good.url.absoluteString]))
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.contains("served a damaged \(sha)"), "\(result.stderr)")
    #expect(try await good.settledRequests().contains { $0.path == "/blobs/\(sha)" && $0.status == 200 })
    #expect(try await blobIsInstalled(sha))
  }
}
