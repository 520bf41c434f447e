import Foundation
import ODRAge
import ODRBase
import ODRCLITesting
import ODRTesting
import Synchronization
import Testing

/// Packs opened by a CI job's identity through KMS (docs/ci.md, "No stored
/// secret"), against a real moto_server (KMS, STS, IAM) with signature
/// checking on, behind ``STSKMSShim`` — which checks what moto does not:
/// the web identity token against its role, and a disabled key. What each
/// test relies on moto for: KMS's encryption and its encryption context
/// (a ciphertext opens only with the context it was made with), IAM
/// policies of an assumed role (a role without `kms:Decrypt` is refused by
/// moto), SigV4 checking of every signed call.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(3))) struct KMSRecipientTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-kms-\(UUID().uuidString)")
  var published: URL { root.appending(path: "pub") }
  static let weather = "demo-weather-0000-not-a-real-key"

  /// A key, a role allowed to decrypt with it, one that is not, and each
  /// role's token (a JWT-shaped string; moto does not read it, the shim
  /// compares it).
  struct Fixture: Decodable {
    let key: String
    let reader: String
    let noDecrypt: String
    var readerToken = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJyZXBvOmV4YW1wbGUvYXBwOnJlZjpyZWZzL2hlYWRzL21haW4ifQ.\(UUID().uuidString)"
    var otherToken = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJyZXBvOmV4YW1wbGUvb3RoZXIifQ.\(UUID().uuidString)"
    enum CodingKeys: String, CodingKey { case key, reader, noDecrypt }
  }

  /// One fixture per test, all made by one Python run per test process
  /// (each starts boto3 in about half a second of CPU).
  static let fixtureCount = 4
  static let fixtures = Mutex<Task<[Fixture], any Error>?>(nil)
  static let taken = Mutex(0)

  func fixture(_ moto: MotoServer) async throws -> Fixture {
    let made = Self.fixtures.withLock { task in
      if task == nil { task = Task { try await Self.make(Self.fixtureCount, on: moto) } }
      return task!
    }
    let all = try await made.value
    let index = Self.taken.withLock { taken in
      taken += 1
      return taken - 1
    }
    try #require(index < all.count, "every fixture is taken: raise KMSRecipientTests.fixtureCount")
    return all[index]
  }

  static func make(_ count: Int, on moto: MotoServer) async throws -> [Fixture] {
    let suffix = UUID().uuidString.prefix(8)
    let made = try await moto.boto("""
      import json
      kms = session.client("kms", endpoint_url=endpoint)
      iam = session.client("iam", endpoint_url=endpoint)
      trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRoleWithWebIdentity",
               "Principal": {"Federated": "arn:aws:iam::123456789012:oidc-provider/token.actions.githubusercontent.com"}}]}
      def role(name, actions):
          arn = iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]
          # "*": moto's authorizer does not match a key ARN as a policy's resource
          policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]}
          iam.put_role_policy(RoleName=name, PolicyName="kms", PolicyDocument=json.dumps(policy))
          return arn
      print(json.dumps([{"key": kms.create_key(Description="odr test")["KeyMetadata"]["Arn"],
                         "reader": role(f"odr-ci-\(suffix)-{n}", ["kms:Decrypt", "s3:GetObject"]),
                         "noDecrypt": role(f"odr-nodecrypt-\(suffix)-{n}", ["kms:Encrypt"])} for n in range(\(count))]))
      """)
    try #require(made.status == 0, "\(made.output)")
    return try JSONDecoder().decode([Fixture].self, from: Data(made.stdout.utf8))
  }

  /// A job's environment: the web identity, the shim as AWS's endpoint,
  /// folders of its own; no identity, no keyring, no stored AWS key.
  func job(role: String, token: String, endpoint: String, name: String = "job") throws -> [String: String] {
    let home = root.appending(path: name)
    try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    let tokenFile = root.appending(path: "\(name)-token.jwt")
    try Data(token.utf8).write(to: tokenFile)
    return ["PATH": "/usr/bin:/bin", "HOME": home.path, "TMPDIR": home.path, "XDG_CACHE_HOME": home.appending(path: "cache").path,
            "XDG_STATE_HOME": home.appending(path: "state").path, "XDG_CONFIG_HOME": home.appending(path: "config").path,
            "AWS_ROLE_ARN": role, "AWS_WEB_IDENTITY_TOKEN_FILE": tokenFile.path, "AWS_ENDPOINT_URL": endpoint]
  }

  /// Packs the demo's APIKeys to the KMS key and an X25519 recipient,
  /// through the shim, as the publisher (kms:Encrypt).
  func pack(_ moto: MotoServer, key: String, endpoint: String) async throws {
    var env = moto.environment(moto.user, base: ["PATH": "/usr/bin:/bin", "HOME": root.path])
    env["AWS_ENDPOINT_URL"] = endpoint
    let pack = try await Command.odrProcess(["pack", Paths.packageRoot.appending(path: "resources/Demo").path, "--output", published.path, "--quiet",
                                             "--recipient", "awskms:\(key)", "--recipient", AgeIdentity().recipient.description], environment: env)
    try #require(pack.status == 0, "\(pack.stderr)")
  }

  /// A test's scene: moto, a fixture of its own, the shim admitting the
  /// tokens `admitting` names, and the demo packed to the fixture's key
  /// through the shim; `root` is removed afterwards.
  func scene(admitting: (Fixture) -> [String: String],
             _ body: (MotoServer, Fixture, STSKMSShim, TestHTTPServer) async throws -> Void) async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let moto = try await MotoServer.start()
    let keys = try await fixture(moto)
    let shim = STSKMSShim(moto: moto, admitted: admitting(keys))
    try await shim.serving { server in
      try await pack(moto, key: keys.key, endpoint: server.url)
      try await body(moto, keys, shim, server)
    }
  }

  @Test func aPackToKMSAndX25519OpensByKMSAloneInAJobWithOnlyAWebIdentity() async throws {
    try await scene(admitting: { keys in [keys.reader: keys.readerToken] }) { moto, keys, shim, server in
      let blob = try Data(contentsOf: try PublishedFiles.blob(of: "APIKeys", in: published))
      let stanza = try #require(try AgeHeader(parsing: Array(blob)).stanzas.first { $0.type == "odr-awskms" })
      #expect(stanza.arguments == [keys.key])

      // boto3, an independent KMS client, opens the stanza's ciphertext
      // with the same context, and that file key opens the pack; another
      // context does not open.
      let context = #"{"odr:bundle": "com.example.demo", "odr:tag": "APIKeys"}"#
      let opened = try await moto.boto("""
        import base64, json
        kms = session.client("kms", endpoint_url=endpoint)
        blob = base64.b64decode("\(Data(stanza.body).base64EncodedString())")
        print(base64.b64encode(kms.decrypt(CiphertextBlob=blob, KeyId="\(keys.key)", EncryptionContext=json.loads('\(context)'))["Plaintext"]).decode())
        try:
            kms.decrypt(CiphertextBlob=blob, EncryptionContext={"odr:bundle": "com.example.other", "odr:tag": "APIKeys"})
            print("opened with another context")
        except kms.exceptions.InvalidCiphertextException:
            print("refused another context")
        """)
      try #require(opened.status == 0, "\(opened.output)")
      let lines = opened.stdout.split(separator: "\n").map(String.init)
      #expect(lines.last == "refused another context", "\(opened.output)")
      let fileKey = try #require(Data(base64Encoded: lines.first ?? ""))
      #expect(fileKey.count == 16)
      let plaintext = try await Age.decrypt(blob, identities: [], keyService: FixedKey(key: Array(fileKey)), context: [:])
      #expect(String(decoding: plaintext, as: UTF8.self).contains(Self.weather))

      // The job: a web identity and an endpoint, nothing else.
      let env = try job(role: keys.reader, token: keys.readerToken, endpoint: server.url)
      let run = try await Command.odrProcess(["exec", "--catalog", published.path, "--fetch", "APIKeys", "--",
                                              "/bin/sh", "-c", "test \"$WEATHER_API_KEY\" = '\(Self.weather)' && env"], environment: env)
      #expect(run.status == 0, "\(run.stderr)")
      let seen = shim.seen.withLock { $0 }
      let assumed = seen.filter { $0.action == "AssumeRoleWithWebIdentity" }
      #expect(assumed.count == 1 && assumed.first?.authorization == nil, "STS is asked once, unsigned: \(seen.map(\.action))")
      let issued = shim.issued.withLock { $0 }
      try #require(issued.count == 3, "STS issued no credentials")
      #expect(seen.contains { $0.action == "TrentService.Decrypt" && $0.authorization?.contains("Credential=\(issued[0])/") == true },
              "Decrypt is signed with the role's credentials")
      // Neither the role's credentials, the token, nor the file key reach
      // the output, the command's environment or the job's disk.
      let secrets = issued + [keys.readerToken, fileKey.base64EncodedString()]
      for secret in secrets { #expect(!run.output.contains(secret)) }
      #expect(!run.stdout.contains("AWS_SESSION_TOKEN") && !run.stdout.contains("AWS_SECRET_ACCESS_KEY"))
      #expect(PublishedFiles.containing(secrets + [Self.weather], under: root.appending(path: "job")).isEmpty)

      // odr fetch: the same pack into a keyring, opened the same way (a
      // bundle of its own on the test's keyring session).
      var desktop = try job(role: keys.reader, token: keys.readerToken, endpoint: server.url, name: "desktop")
      desktop["DBUS_SESSION_BUS_ADDRESS"] = KeyringSession.shared.environment["DBUS_SESSION_BUS_ADDRESS"]
      let service = "com.example.kms-\(UUID().uuidString.prefix(8))"
      let fetch = try await Command.odr(["fetch", "APIKeys", "--catalog", published.path, "--service", service, "--quiet"], environment: desktop)
      defer { Command.odrInBackground(["delete", "--all", "--service", service], environment: desktop) }
      #expect(fetch.status == 0, "\(fetch.stderr)")
      #expect(try await Command.keyringValue(service: service, key: "Weather", environment: desktop) == Self.weather)
    }
  }

  @Test func eachKMSFailureSaysWhichStepFailedWithItsOwnExitCode() async throws {
    try await scene(admitting: { keys in [keys.reader: keys.readerToken, keys.noDecrypt: keys.otherToken] }) { moto, keys, shim, server in
      func fetch(_ env: [String: String], catalog: URL? = nil) async throws -> Command.Result {
        try await Command.odrProcess(["exec", "--catalog", (catalog ?? published).path, "--fetch", "APIKeys", "--", "true"], environment: env)
      }
      func secretsKept(_ result: Command.Result) {
        for secret in shim.issued.withLock({ $0 }) + [keys.readerToken, keys.otherToken, Self.weather] {
          #expect(!result.output.contains(secret))
        }
      }

      // The token is not the one the role admits: STS refuses (exit 10).
      let refused = try await fetch(try job(role: keys.reader, token: keys.otherToken, endpoint: server.url, name: "refused"))
      #expect(refused.status == 10 && refused.stderr.contains("STS refused to let this job assume the role \(keys.reader)")
              && refused.stderr.contains("AccessDenied") && refused.stderr.contains("trust policy"), "\(refused.stderr)")
      secretsKept(refused)

      // The role exists and is assumed, but its policy has no kms:Decrypt (exit 10).
      let denied = try await fetch(try job(role: keys.noDecrypt, token: keys.otherToken, endpoint: server.url, name: "denied"))
      #expect(denied.status == 10 && denied.stderr.contains("KMS denied Decrypt on \(keys.key)")
              && denied.stderr.contains("kms:Decrypt") && denied.stderr.contains("odr:tag=APIKeys"), "\(denied.stderr)")
      secretsKept(denied)

      // The ciphertext moved to another bundle: the context differs (exit 4).
      let other = root.appending(path: "other")
      try FileManager.default.copyItem(at: published, to: other)
      let catalogFile = other.appending(path: "catalog.json")
      let text = try String(contentsOf: catalogFile, encoding: .utf8).replacingOccurrences(of: "com.example.demo", with: "com.example.other")
      try Data(text.utf8).write(to: catalogFile)
      let reader = try job(role: keys.reader, token: keys.readerToken, endpoint: server.url, name: "moved")
      let moved = try await fetch(reader, catalog: other)
      #expect(moved.status == 4 && moved.stderr.contains("not made for this encryption context (odr:bundle=com.example.other, odr:tag=APIKeys)"),
              "\(moved.stderr)")
      secretsKept(moved)

      // The key is disabled (exit 1): its owner must enable it. (moto
      // ignores a key's state, so the shim answers as KMS does.)
      shim.disabled.withLock { _ = $0.insert(keys.key) }
      let disabled = try await fetch(reader)
      #expect(disabled.status == 1 && disabled.stderr.contains("The KMS key \(keys.key) cannot be used: DisabledException"), "\(disabled.stderr)")
      secretsKept(disabled)

      // The token file is not there (exit 3); KMS is not reachable (exit 7).
      var lost = reader
      lost["AWS_WEB_IDENTITY_TOKEN_FILE"] = root.appending(path: "no-such-token").path
      let noToken = try await fetch(lost)
      #expect(noToken.status == 3 && noToken.stderr.contains("cannot be read: there is no such file"), "\(noToken.stderr)")
      var dead = reader
      dead["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9"
      let unreachable = try await fetch(dead)
      #expect(unreachable.status == 7 && unreachable.stderr.contains("connection refused"), "\(unreachable.stderr)")

      // A key ARN of another region: KMS there has no such key (exit 3), said at pack time.
      var publisher = moto.environment(moto.user, base: ["PATH": "/usr/bin:/bin", "HOME": root.path])
      publisher["AWS_ENDPOINT_URL"] = server.url
      let elsewhere = keys.key.replacingOccurrences(of: ":us-east-1:", with: ":eu-west-3:")
      let wrongRegion = try await Command.odrProcess(["pack", Paths.packageRoot.appending(path: "resources/Demo").path, "--output",
                                                      root.appending(path: "elsewhere").path, "--recipient", "awskms:\(elsewhere)"], environment: publisher)
      #expect(wrongRegion.status == 3 && wrongRegion.stderr.contains("KMS in eu-west-3 has no key \(elsewhere)"), "\(wrongRegion.stderr)")
      #expect(!FileManager.default.fileExists(atPath: root.appending(path: "elsewhere/catalog.json").path))

      // No AWS credentials at all: the message names the KMS key (exit 10).
      var none = reader
      for name in ["AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE"] { none[name] = nil }
      let nothing = try await fetch(none)
      #expect(nothing.status == 10 && nothing.stderr.contains("among them the AWS KMS key \(keys.key)"), "\(nothing.stderr)")
      #expect(Set([refused.status, denied.status, moved.status, disabled.status]) == [10, 4, 1])
    }
  }

  /// The whole of "no stored secret": the catalog in a private bucket and
  /// the pack to KMS, both reached as the role the job's web identity
  /// assumes (one STS call for both).
  @Test func aJobReadsAPrivateBucketAndOpensThePackAsItsRole() async throws {
    try await scene(admitting: { keys in [keys.reader: keys.readerToken] }) { moto, keys, shim, server in
      let catalog = "s3://\(moto.bucket)/apps/demo"
      var publisher = moto.environment(moto.user, base: ["PATH": "/usr/bin:/bin", "HOME": root.path])
      publisher["AWS_ENDPOINT_URL"] = server.url
      let publish = try await Command.odrProcess(["publish", published.path, catalog, "--quiet"], environment: publisher)
      try #require(publish.status == 0, "\(publish.stderr)")
      // The bucket is on a store that is not AWS's own (an endpoint is set):
      // the role is assumed for it only where AWS_ENDPOINT_URL_STS says.
      var env = try job(role: keys.reader, token: keys.readerToken, endpoint: server.url)
      let unsaid = try await Command.odrProcess(["exec", "--catalog", catalog, "--fetch", "APIKeys", "--", "true"], environment: env)
      #expect(unsaid.status == 10 && unsaid.stderr.contains("no AWS credentials") && shim.issued.withLock({ $0 }).isEmpty, "\(unsaid.stderr)")
      env["AWS_ENDPOINT_URL_STS"] = server.url
      let run = try await Command.odrProcess(["exec", "--catalog", catalog, "--fetch", "APIKeys", "--",
                                              "/bin/sh", "-c", "test \"$WEATHER_API_KEY\" = '\(Self.weather)'"], environment: env)
      #expect(run.status == 0, "\(run.stderr)")
      let seen = shim.seen.withLock { $0 }
      #expect(seen.filter { $0.action == "AssumeRoleWithWebIdentity" }.count == 1, "\(seen.map(\.action))")
      let issued = shim.issued.withLock { $0 }
      try #require(issued.count == 3)
      let signedByRole = seen.filter { $0.authorization?.contains("Credential=\(issued[0])/") == true }
      #expect(signedByRole.contains { $0.action == "TrentService.Decrypt" } && signedByRole.count >= 3, "the catalog, its blob and Decrypt, as the role")
      for secret in issued + [keys.readerToken] { #expect(!run.output.contains(secret)) }
      // The role that may not read the bucket is refused by S3, and the message names the role, never its credentials.
      var other = try job(role: keys.noDecrypt, token: keys.otherToken, endpoint: server.url, name: "other")
      other["AWS_ENDPOINT_URL_STS"] = server.url
      shim.admitted.withLock { $0[keys.noDecrypt] = keys.otherToken }
      let refused = try await Command.odrProcess(["exec", "--catalog", catalog, "--fetch", "APIKeys", "--", "true"], environment: other)
      #expect(refused.status == 10 && refused.stderr.contains("the role \(keys.noDecrypt)"), "\(refused.stderr)")
      for secret in shim.issued.withLock({ $0 }) { #expect(!refused.output.contains(secret)) }
    }
  }

  @Test func theActionFetchesWithARoleAndNoIdentityInput() async throws {
    let requestToken = "gh-request-\(UUID().uuidString)"
    try await scene(admitting: { keys in [keys.reader: keys.readerToken] }) { moto, keys, shim, server in
      // GitHub's OIDC endpoint, as a runner with `id-token: write` has it.
      let oidc: @Sendable (TestHTTPServer.Request) -> TestHTTPServer.Reply = { request in
        guard request.headers["authorization"] == "bearer \(requestToken)", request.query?.contains("audience=sts.amazonaws.com") == true else {
          return .text("unauthorized", status: 401)
        }
        return .text(#"{"count": 1, "value": "\#(keys.readerToken)"}"#)
      }
      try await TestHTTPServer.answering(oidc) { github in
        let runner = root.appending(path: "runner")
        try FileManager.default.createDirectory(at: runner, withIntermediateDirectories: true)
        for file in ["env", "output"] { try Data().write(to: runner.appending(path: file)) }
        let env = ["PATH": "\(Paths.odr.deletingLastPathComponent().path):/usr/bin:/bin", "HOME": runner.path, "RUNNER_TEMP": runner.path,
                   "XDG_CACHE_HOME": runner.appending(path: "cache").path, "XDG_STATE_HOME": runner.appending(path: "state").path,
                   "GITHUB_ENV": runner.appending(path: "env").path, "GITHUB_OUTPUT": runner.appending(path: "output").path,
                   "ACTIONS_ID_TOKEN_REQUEST_URL": "\(github.url)/token?api-version=2.0", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": requestToken,
                   "AWS_ENDPOINT_URL": server.url,
                   "ODR_ACTION_CATALOG": published.path, "ODR_ACTION_FETCH": "APIKeys",
                   "ODR_ACTION_AWS_ROLE_ARN": keys.reader, "ODR_ACTION_AWS_REGION": "us-east-1"]
        let step = try await Command.run("/bin/bash", [Paths.packageRoot.appending(path: "scripts/action-fetch").path], environment: env)
        #expect(step.status == 0, "\(step.output)")
        #expect(step.stdout.contains("::add-mask::\(Self.weather)"), "\(step.stdout)")
        let exported = try String(contentsOf: runner.appending(path: "env"), encoding: .utf8)
        #expect(exported.contains("WEATHER_API_KEY<<") && exported.contains(Self.weather))
        #expect(github.requests.count == 1)
        for secret in shim.issued.withLock({ $0 }) + [keys.readerToken, requestToken] {
          #expect(!step.output.contains(secret) && !exported.contains(secret))
        }
        // Without id-token: write (no request URL), the step says what to give the job.
        var bare = env
        bare["ACTIONS_ID_TOKEN_REQUEST_URL"] = nil
        bare["ACTIONS_ID_TOKEN_REQUEST_TOKEN"] = nil
        let missing = try await Command.run("/bin/bash", [Paths.packageRoot.appending(path: "scripts/action-fetch").path], environment: bare)
        #expect(missing.status != 0 && missing.stdout.contains("::error title=odr::") && missing.output.contains("id-token: write"), "\(missing.output)")
      }
    }
  }
}

/// A key service that hands back one file key: what boto3 opened, checked
/// to be the pack's.
struct FixedKey: KeyWrapService {
  let key: [UInt8]
  func wrap(_ secret: [UInt8], key: String, context: [String: String]) async throws -> [UInt8] { secret }
  func unwrap(_ blob: [UInt8], key: String, context: [String: String]) async throws -> [UInt8] { self.key }
}
