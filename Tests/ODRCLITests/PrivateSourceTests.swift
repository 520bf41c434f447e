import Foundation
import ODRCLITesting
import ODRTesting
import Testing

/// Private sources (docs/hosting.md): an S3 bucket on a real moto_server with
/// signature checking on, and HTTPS-style token auth from the keyring
/// against a real nginx that requires it. `odr publish` to both kinds of
/// destination.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(3))) struct PrivateSourceTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-private-\(UUID().uuidString)")
  var published: URL { root.appending(path: "pub") }

  func pack() async throws {
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    let pack = try await Command.odr(["pack", Paths.packageRoot.appending(path: "resources/Demo").path, "--output", published.path, "--quiet", "--plaintext-secrets"])
    try #require(pack.status == 0, "\(pack.stderr)")
  }

  var base: [String: String] {
    var env = KeyringSession.shared.environment
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    env["ODR_CATALOG"] = nil
    env["ODR_SERVICE"] = nil
    return env
  }

  @Test func aPrivateBucketIsPublishedToAndReadWithTheRightCredentialsOnly() async throws {
    try await pack()
    defer { try? FileManager.default.removeItem(at: root) }
    let moto = try await MotoServer.start()
    let catalog = "s3://\(moto.bucket)/apps/demo"
    let user = moto.environment(moto.user, base: base)

    let dry = try await Command.odr(["publish", published.path, catalog, "--dry-run"], environment: user)
    #expect(dry.status == 0, "\(dry.stderr)")
    #expect(dry.stdout.split(separator: "\n").last?.hasPrefix("upload\tcatalog.json") == true, "\(dry.stdout)")
    #expect(try await moto.boto("print(s3.list_objects_v2(Bucket='\(moto.bucket)').get('KeyCount'))").stdout.hasPrefix("0"))
    let noBucket = try await Command.odr(["publish", published.path, "s3://\(moto.bucket)-missing/apps"], environment: user)
    #expect(noBucket.status == 3 && noBucket.stderr.contains("NoSuchBucket") && noBucket.stderr.contains("the bucket does not exist"), "\(noBucket.stderr)")
    let publish = try await Command.odr(["publish", published.path, catalog], environment: user)
    #expect(publish.status == 0, "\(publish.stderr)")
    let headers = try await moto.boto("""
      blob = [o['Key'] for o in s3.list_objects_v2(Bucket='\(moto.bucket)')['Contents'] if '/blobs/' in o['Key']][0]
      print(s3.head_object(Bucket='\(moto.bucket)', Key=blob).get('CacheControl'))
      print(s3.head_object(Bucket='\(moto.bucket)', Key='apps/demo/catalog.json').get('CacheControl'))
      """)
    #expect(headers.stdout == "public, max-age=31536000, immutable\nno-cache\n", "\(headers.output)")
    // Published again: every blob is already there.
    let again = try await Command.odr(["publish", published.path, catalog, "--json"], environment: user)
    #expect(again.status == 0)
    struct Plan: Decodable { struct Step: Decodable { let path: String, action: String }; let dryRun: Bool, steps: [Step] }
    let plan = try JSONDecoder().decode(Plan.self, from: Data(again.stdout.utf8))
    #expect(plan.steps.filter { $0.action == "upload" }.map(\.path) == ["catalog.json"])
    #expect(plan.steps.filter { $0.action == "skip" }.count == 6 && !plan.dryRun)

    let begin = try await Command.odr(["begin", "Level2", "Onboarding", "--catalog", catalog], environment: user)
    #expect(begin.status == 0, "\(begin.stderr)")
    let session = try await Command.odr(["prefetch", "--catalog", catalog], environment: moto.environment(moto.session, base: base))
    #expect(session.status == 0, "\(session.stderr)")
    // The secrets pack, fetched from the bucket into memory only.
    let fetch = try await Command.odr(["exec", "--fetch", "APIKeys", "--catalog", catalog, "--", "/bin/sh", "-c", "test -n \"$WEATHER_API_KEY\""],
                                environment: user)
    #expect(fetch.status == 0, "\(fetch.stderr)")

    // A fresh machine (no kept catalog) with bad or no credentials: exit 10,
    // naming the credential's source, never its secret.
    var wrong = moto.user
    wrong = MotoServer.Credentials(accessKeyId: wrong.accessKeyId, secretAccessKey: "not-the-secret-\(UUID().uuidString.prefix(8))", sessionToken: nil)
    var fresh = moto.environment(wrong, base: base)
    fresh["XDG_CACHE_HOME"] = root.appending(path: "cache2").path
    fresh["XDG_STATE_HOME"] = root.appending(path: "state2").path
    let denied = try await Command.odr(["begin", "Level2", "--catalog", catalog], environment: fresh)
    #expect(denied.status == 10, "\(denied.stderr)")
    #expect(denied.stderr.contains("SignatureDoesNotMatch") && denied.stderr.contains("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"), "\(denied.stderr)")
    #expect(!denied.output.contains(wrong.secretAccessKey) && !denied.output.contains(moto.user.secretAccessKey))
    var anonymous = moto.environment(nil, base: base)
    anonymous["XDG_CACHE_HOME"] = fresh["XDG_CACHE_HOME"]
    anonymous["XDG_STATE_HOME"] = fresh["XDG_STATE_HOME"]
    let none = try await Command.odr(["begin", "Level2", "--catalog", catalog], environment: anonymous)
    #expect(none.status == 10, "\(none.stderr)")
    #expect(none.stderr.contains("no AWS credentials"), "\(none.stderr)")
    // The publisher's failures in a publisher's words.
    let refused = try await Command.odr(["publish", published.path, catalog + "-2"], environment: fresh)
    #expect(refused.status == 10 && refused.stderr.contains("Check that credential and what it may write (s3:PutObject"), "\(refused.stderr)")
    var dead = user
    dead["AWS_ENDPOINT_URL"] = "http://127.0.0.1:\(try Nginx.freePort())"
    let down = try await Command.odr(["publish", published.path, catalog + "-2"], environment: dead)
    #expect(down.status == 7 && down.stderr.contains("connection refused") && down.stderr.contains("odr publish stopped (catalog.json goes last"),
            "\(down.stderr)")
    #expect(!(refused.stderr + down.stderr).contains("nothing was installed"))
  }

  @Test func aCredentialsFileProfileSignsToo() async throws {
    try await pack()
    defer { try? FileManager.default.removeItem(at: root) }
    let moto = try await MotoServer.start()
    let file = root.appending(path: "aws-credentials")
    try """
      [default]
      aws_access_key_id = AKIADEFAULTNOTVALID0
      aws_secret_access_key = nope

      [odr-publisher]
      aws_access_key_id = \(moto.user.accessKeyId)
      aws_secret_access_key = \(moto.user.secretAccessKey)
      """.write(to: file, atomically: true, encoding: .utf8)
    var env = moto.environment(nil, base: base)
    env["AWS_SHARED_CREDENTIALS_FILE"] = file.path
    env["AWS_PROFILE"] = "odr-publisher"
    let publish = try await Command.odr(["publish", published.path, "s3://\(moto.bucket)/p"], environment: env)
    #expect(publish.status == 0, "\(publish.stderr)")
    env["AWS_PROFILE"] = nil
    let wrongProfile = try await Command.odr(["begin", "Level2", "--catalog", "s3://\(moto.bucket)/p"], environment: env)
    #expect(wrongProfile.status == 10)
    #expect(wrongProfile.stderr.contains("profile 'default' of \(file.path)"), "\(wrongProfile.stderr)")
  }

  /// `odr publish --prune` on S3: blobs of neither the new catalog nor the
  /// one it replaces go (listed with ListObjectsV2, signed), after the switch.
  @Test func pruningABucketDeletesOnlyBlobsNoCatalogNames() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let moto = try await MotoServer.start()
    let user = moto.environment(moto.user, base: base)
    let destination = "s3://\(moto.bucket)/odr"
    let source = root.appending(path: "src")
    var blobs: [String] = []
    for version in 1...4 {
      try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
      try Data("level \(version)".utf8).write(to: source.appending(path: "level.txt"))
      try Data(#"{"bundle": "com.example.prune", "tags": {"L": {"category": "onDemand", "files": ["level.txt"]}}}"#.utf8).write(to: source.appending(path: "tags.json"))
      let pack = try await Command.odr(["pack", source.path, "--output", published.path, "--catalog-version", "\(version)", "--quiet"], environment: user)
      try #require(pack.status == 0, "\(pack.stderr)")
      let catalog = try JSONSerialization.jsonObject(with: Data(contentsOf: published.appending(path: "catalog.json"))) as? [String: Any]
      let files = ((catalog?["tags"] as? [String: Any])?["L"] as? [String: Any])?["files"] as? [[String: Any]]
      blobs.append(try #require(files?.first?["sha256"] as? String))
      guard version < 4 else { break }  // version 4 is published below, with --prune
      let publish = try await Command.odr(["publish", published.path, destination, "--quiet"], environment: user)
      try #require(publish.status == 0, "\(publish.stderr)")
    }
    // Publishing 4 over 3: 1 and 2 go; 3 stays for clients mid-switch.
    let dry = try await Command.odr(["publish", published.path, destination, "--prune", "--dry-run"], environment: user)
    let deletes = dry.stdout.split(separator: "\n").filter { $0.hasPrefix("delete\t") }.map { String($0.split(separator: "\t")[1]) }
    #expect(dry.status == 0 && deletes.sorted() == ["blobs/\(blobs[0])", "blobs/\(blobs[1])"].sorted(), "\(dry.stdout)\(dry.stderr)")
    let prune = try await Command.odr(["publish", published.path, destination, "--prune"], environment: user)
    #expect(prune.status == 0 && prune.stderr.contains("then 2 blobs no catalog names deleted"), "\(prune.stderr)")
    let left = try await moto.boto("print(sorted(o['Key'] for o in s3.list_objects_v2(Bucket='\(moto.bucket)')['Contents']))")
    #expect(left.stdout.contains(blobs[3]) && left.stdout.contains(blobs[2]) && !left.stdout.contains(blobs[1]) && !left.stdout.contains(blobs[0]),
            "\(left.stdout)\(left.stderr)")
  }

  /// Runs odr in `folder`, where an odr.json is that the user adopted.
  func odr(_ arguments: [String], in folder: URL, environment: [String: String]) async throws -> Command.Result {
    _ = try await Command.odr(["trust", "adopt", "--quiet"], environment: environment, in: folder)
    return try await Command.odr(arguments, environment: environment, in: folder)
  }

  @Test(arguments: [("Authorization", "Bearer "), ("X-Catalog-Token", "")])
  func aTokenFromTheKeyringOpensAProtectedCatalogAndNeverFollowsARedirectElsewhere(_ header: String, _ scheme: String) async throws {
    try await pack()
    defer { try? FileManager.default.removeItem(at: root) }
    let token = "tok-\(UUID().uuidString)"
    let service = "com.example.hosting.\(UUID().uuidString.prefix(8))"
    let elsewhere = try await Nginx.start(root: published)
    defer { elsewhere.stop() }
    let variable = "$http_" + header.lowercased().replacingOccurrences(of: "-", with: "_")
    let guarded = try await Nginx.start(root: published, locations: """
      location / { if (\(variable) != "\(scheme)\(token)") { return 401; } }
      location /blobs/ { if (\(variable) != "\(scheme)\(token)") { return 401; } return 302 \(elsewhere.url.absoluteString.dropLast())$request_uri; }
      """)
    defer { guarded.stop() }
    let project = root.appending(path: "project")
    try FileManager.default.createDirectory(at: project, withIntermediateDirectories: true)
    let auth = header == "Authorization" ? #"{"key": "CatalogToken", "service": "\#(service)"}"# : #"{"header": "\#(header)", "key": "CatalogToken", "service": "\#(service)"}"#
    try #"{"catalog": "\#(guarded.url.absoluteString)", "auth": \#(auth)}"#.write(to: project.appending(path: "odr.json"), atomically: true, encoding: .utf8)
    let origin = String(guarded.url.absoluteString.dropLast())
    // Red team 1: an item not marked as this origin's catalog token is never sent.
    #expect(try await Command.odr(["set", "CatalogToken", "--service", service], input: token, environment: base).status == 0)
    let unmarked = try await odr(["begin", "Level2"], in: project, environment: base)
    #expect(unmarked.status == 10, "\(unmarked.stderr)")
    #expect(unmarked.stderr.contains("not marked as a catalog token for \(origin)"), "\(unmarked.stderr)")
    let none = try await guarded.settledRequests()
    #expect(none.isEmpty, "\(none)")
    #expect(try await Command.odr(["set", "CatalogToken", "--service", service, "--catalog-token-for", origin], input: "not-\(token)", environment: base).status == 0)
    let denied = try await odr(["begin", "Level2"], in: project, environment: base)
    #expect(denied.status == 10, "\(denied.stderr)")
    #expect(denied.stderr.contains("the keyring item CatalogToken of \(service)"), "\(denied.stderr)")
    #expect(!denied.output.contains(token))

    #expect(try await Command.odr(["set", "CatalogToken", "--service", service, "--catalog-token-for", origin], input: token, environment: base).status == 0)
    let begin = try await odr(["begin", "Level2", "--quiet"], in: project, environment: base)
    #expect(begin.status == 0, "\(begin.stderr)")
    // odr verify of the live host reads it as clients do: with the token.
    // (It still exits 4: this test catalog is unsigned, with a plaintext secrets tag.)
    let verify = try await odr(["verify", guarded.url.absoluteString], in: project, environment: base)
    #expect(verify.stdout.contains("com.example.demo version"), "\(verify.stderr)")
    #expect(verify.stdout.contains("not signed"), "\(verify.stdout)")
    #expect(try await guarded.settledRequests().filter { $0.status == 302 }.allSatisfy { $0.authenticated })
    let landed = try await elsewhere.settledRequests()
    #expect(!landed.isEmpty && landed.allSatisfy { !$0.authenticated }, "\(landed)")
    // Not in odr's files either.
    let grep = try await Command.run("/bin/grep", ["-rl", token, root.path])
    #expect(grep.stdout.isEmpty, "\(grep.stdout)")
  }
}
