import Foundation
import ODRBase
import ODRCatalog
import ODRTesting
@testable import ODRTransports
import Synchronization
import Testing

/// The pure parts of odr's AWS calls (KMS, STS, GitHub's OIDC token): key
/// ARNs, what an answer says, which credentials the environment names.
/// The calls themselves are tested against moto (KMSRecipientTests).
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(1))) struct AWSCallsTests {
  @Test(arguments: [
    ("arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab", "us-east-1", false),
    ("arn:aws:kms:eu-central-2:123456789012:key/mrk-1234abcd12ab34cd56ef1234567890ab", "eu-central-2", false),
    ("arn:aws-us-gov:kms:us-gov-west-1:123456789012:alias/odr/ci", "us-gov-west-1", true),
    ("arn:aws-cn:kms:cn-north-1:123456789012:alias/odr_ci-keys", "cn-north-1", true),
  ])
  func aKMSKeyARNNamesItsRegion(text: String, region: String, alias: Bool) throws {
    let arn = try #require(KMSKeyARN(text))
    #expect(arn.region == region && arn.isAlias == alias && arn.description == text)
  }

  @Test(arguments: [
    "", "1234abcd-12ab-34cd-56ef-1234567890ab", "alias/odr", "arn:aws:s3:::bucket",
    "arn:aws:kms:us-east-1:12345678901:key/abc",        // an 11-digit account
    "arn:aws:kms:us-east-1:123456789012:key/",          // no id
    "arn:aws:kms:us-east-1:123456789012:keys/abc",      // not key/ or alias/
    "arn:aws:kms:useast1:123456789012:key/abc",         // not a region
    "arn:aws:kms:us-east-1:123456789012:key/abc def",   // white space
    "arn:aws:kms:us-east-1:123456789012:alias/é",       // not ASCII
    "arn:AWS:kms:us-east-1:123456789012:key/abc",       // a partition in capitals
    "arn:aws:kms:us-east-1:123456789012:key/" + String(repeating: "a", count: 65),
  ])
  func notAKMSKeyARN(text: String) {
    #expect(KMSKeyARN(text) == nil)
  }

  @Test func anXMLElementIsReadWithItsEntitiesAndNothingElse() {
    let text = "<R><Code>AccessDenied</Code><Message>a &lt;b&gt; &amp; &#65;&#x42; &bogus; &</Message><Nested><X>1</X></Nested></R>"
    #expect(XMLText.element("Code", in: text) == "AccessDenied")
    #expect(XMLText.element("Message", in: text) == "a <b> & AB &bogus; &")
    #expect(XMLText.element("Nested", in: text) == nil)  // elements inside are not text
    #expect(XMLText.element("Missing", in: text) == nil)
    #expect(XMLText.element("Code", in: "<Code>unterminated") == nil)
  }

  @Test func stsCredentialsAreReadFromItsAnswer() throws {
    let body = """
      <AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>
      <AccessKeyId>ASIAEXAMPLE</AccessKeyId><SecretAccessKey>se/cr+et</SecretAccessKey>
      <SessionToken>tok&amp;en</SessionToken><Expiration>2026-11-28T13:00:00Z</Expiration>
      </Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>
      """
    let (credentials, expires) = try STSWebIdentity.credentials(from: HTTPExchangeResponse(status: 200, body: Data(body.utf8)),
                                                                role: "arn:aws:iam::1:role/ci", tokenSource: "a file")
    #expect(credentials.accessKeyID == "ASIAEXAMPLE" && credentials.secretAccessKey == "se/cr+et" && credentials.sessionToken == "tok&en")
    #expect(expires == Date(timeIntervalSince1970: 1_795_870_800))
    #expect(!credentials.description.contains("se/cr+et") && !credentials.description.contains("tok&en"))
  }

  @Test(arguments: [
    (403, "<ErrorResponse><Error><Code>AccessDenied</Code><Message>Not authorized</Message></Error></ErrorResponse>", "role-refused"),
    (400, "<ErrorResponse><Error><Code>InvalidIdentityToken</Code><Message>bad</Message></Error></ErrorResponse>", "role-refused"),
    (400, "<ErrorResponse><Error><Code>ExpiredTokenException</Code></Error></ErrorResponse>", "role-refused"),
    (500, "<!doctype html>", "service"),
    (400, "<ErrorResponse><Error><Code>Throttling</Code></Error></ErrorResponse>", "service"),
    (200, "<Nothing/>", "service"),
  ])
  func anSTSRefusalSaysWhichStepFailed(status: Int, body: String, code: String) {
    #expect {
      try STSWebIdentity.credentials(from: HTTPExchangeResponse(status: status, body: Data(body.utf8)), role: "arn:aws:iam::1:role/ci", tokenSource: "a file")
    } throws: { error in
      guard let error = error as? AWSError else { return false }
      return error.code.description == code && error.message.contains("arn:aws:iam::1:role/ci")
    }
  }

  @Test(arguments: [
    (400, #"{"__type":"AccessDeniedException","message":"User is not authorized"}"#, "key-denied", "User is not authorized"),
    (403, "<ErrorResponse><Errors><Error><Code>AccessDenied</Code><Message>not authorized</Message></Error></Errors></ErrorResponse>", "key-denied", "not authorized"),
    (400, #"{"__type":"com.amazonaws.kms#DisabledException","Message":"disabled"}"#, "key-disabled", "DisabledException"),
    (400, #"{"__type":"KMSInvalidStateException"}"#, "key-disabled", "pending deletion"),
    (400, #"{"__type":"NotFoundException","message":"Key not found"}"#, "key-not-found", "KMS in us-east-1 has no key"),
    (400, #"{"__type":"InvalidCiphertextException"}"#, "wrong-context", "odr:bundle=b, odr:tag=t"),
    (400, #"{"__type":"IncorrectKeyException"}"#, "wrong-context", "encryption context"),
    (400, #"{"__type":"UnrecognizedClientException","message":"The security token included in the request is invalid."}"#, "credentials-refused", "current"),
    (400, #"{"__type":"ThrottlingException"}"#, "service", "Try again"),
    (500, "oops", "service", "HTTP 500"),
    (400, #"{"__type":"<script>\n","message":"\u0007bell"}"#, "service", "an unnamed error: ?bell"),
  ])
  func aKMSErrorSaysWhatToCheck(status: Int, body: String, code: String, says: String) throws {
    let arn = try #require(KMSKeyARN("arn:aws:kms:us-east-1:123456789012:key/k"))
    let error = AWSKMS.failure(HTTPExchangeResponse(status: status, body: Data(body.utf8)), action: "Decrypt", arn: arn,
                               context: ["odr:bundle": "b", "odr:tag": "t"], credentials: "the role r")
    #expect(error.code.description == code && error.message.contains(says), "\(error.message)")
  }

  /// Never asked: ``AWSCredentialChain/find(in:http:)`` reads nothing.
  struct NoNetwork: HTTPExchanging {
    func exchange(_ request: HTTPExchangeRequest, limit: Int) async throws -> HTTPExchangeResponse {
      throw ResourceError(.network, "no network in this test")
    }
  }

  @Test func theCredentialChainTakesTheFirstSourceTheEnvironmentNames() throws {
    let profile = FileManager.default.temporaryDirectory.appending(path: "odr-aws-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: profile) }
    try Data("[default]\naws_access_key_id = AKIAPROFILE\naws_secret_access_key = s\n".utf8).write(to: profile)
    let keys = ["AWS_ACCESS_KEY_ID": "AKIAVARS", "AWS_SECRET_ACCESS_KEY": "s"]
    let web = ["AWS_ROLE_ARN": "arn:aws:iam::1:role/ci", "AWS_WEB_IDENTITY_TOKEN_FILE": "/run/token"]
    let github = ["AWS_ROLE_ARN": "arn:aws:iam::1:role/gh", "ACTIONS_ID_TOKEN_REQUEST_URL": "https://gh/token", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "t"]
    let file = ["AWS_SHARED_CREDENTIALS_FILE": profile.path]
    func source(_ environment: [String: String]) -> String {
      switch AWSCredentialChain.find(in: environment, http: NoNetwork())?.source {
      case .fixed(let credentials)?: "fixed \(credentials.accessKeyID)"
      case .webIdentity(let role, let file)?: "web \(role) \(file)"
      case .gitHubOIDC(let role, _, _)?: "github \(role)"
      case .noToken(let role)?: "no token \(role)"
      case nil: "none"
      }
    }
    #expect(source(keys.merging(web) { $1 }.merging(file) { $1 }) == "fixed AKIAVARS")
    #expect(source(web.merging(github) { a, _ in a }.merging(file) { $1 }) == "web arn:aws:iam::1:role/ci /run/token")
    #expect(source(github.merging(file) { $1 }) == "github arn:aws:iam::1:role/gh")
    #expect(source(file) == "fixed AKIAPROFILE")
    #expect(source(["ACTIONS_ID_TOKEN_REQUEST_URL": "https://gh/token", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "t"]) == "none")  // no role to assume
    #expect(source(["AWS_ROLE_ARN": "arn:aws:iam::1:role/ci", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent"]) == "no token arn:aws:iam::1:role/ci")
    #expect(source(["AWS_ROLE_ARN": "arn:aws:iam::1:role/ci"].merging(file) { $1 }) == "fixed AKIAPROFILE")
    #expect(source(["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent"]) == "none")
  }

  @Test func endpointsComeFromTheServiceVariableThenTheGeneralOneThenAWS() throws {
    #expect(try AWSEndpoint.url("kms", region: "eu-west-3", in: [:]).absoluteString == "https://kms.eu-west-3.amazonaws.com/")
    #expect(try AWSEndpoint.url("sts", region: "cn-north-1", in: [:]).absoluteString == "https://sts.cn-north-1.amazonaws.com.cn/")
    let both = ["AWS_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_ENDPOINT_URL_KMS": "http://127.0.0.1:2"]
    #expect(try AWSEndpoint.url("kms", region: "us-east-1", in: both).absoluteString == "http://127.0.0.1:2")
    #expect(try AWSEndpoint.url("sts", region: "us-east-1", in: both).absoluteString == "http://127.0.0.1:1")
    #expect(throws: ResourceError.self) { try AWSEndpoint.url("kms", region: "us-east-1", in: ["AWS_ENDPOINT_URL": "http://user:pw@host/"]) }
    // What carries a token or credentials goes over https, or to this machine.
    #expect(try AWSEndpoint.url("sts", region: "us-east-1", in: ["AWS_ENDPOINT_URL": "http://[::1]:4566"]).port == 4566)
    #expect { try AWSEndpoint.url("sts", region: "us-east-1", in: ["AWS_ENDPOINT_URL": "http://minio.example:9000"]) } throws: {
      ($0 as? ResourceError)?.message.contains("over https only") == true
    }
    // A region is a region's name, never a host's.
    for region in ["x@127.0.0.1:18082/#", "us-east-1.evil.example", "US-EAST-1", "", "us-east-1/"] {
      #expect(throws: ResourceError.self) { try AWSEndpoint.url("sts", region: region, in: [:]) }
    }
  }

  /// Answers every exchange with `status`, counting them.
  final class Answering: HTTPExchanging {
    let status: Int
    let body: String
    let count = Mutex(0)
    init(_ status: Int, _ body: String = "") { (self.status, self.body) = (status, body) }
    func exchange(_ request: HTTPExchangeRequest, limit: Int) async throws -> HTTPExchangeResponse {
      count.withLock { $0 += 1 }
      return HTTPExchangeResponse(status: status, body: Data(body.utf8))
    }
  }

  @Test func eachTokenSourceFailsWithItsOwnCode() async throws {
    let github = ["AWS_ROLE_ARN": "arn:aws:iam::1:role/gh", "ACTIONS_ID_TOKEN_REQUEST_URL": "https://gh.example/token", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "t"]
    /// Each case assumes a role of its own: a process asks for a role once.
    func failure(_ environment: [String: String], _ http: any HTTPExchanging) async -> String? {
      var environment = environment
      environment["AWS_ROLE_ARN"] = environment["AWS_ROLE_ARN"].map { "\($0)-\(UUID().uuidString.prefix(8))" }
      guard let chain = AWSCredentialChain.find(in: environment, http: http) else { return "none" }
      do { _ = try await chain.credentials(); return nil } catch { return (error as? AWSError)?.code.description }
    }
    #expect(await failure(github, Answering(403)) == "no-token")
    #expect(await failure(github, Answering(503)) == "service")
    #expect(await failure(github, Answering(200, "{}")) == "no-token")
    var plain = github
    plain["ACTIONS_ID_TOKEN_REQUEST_URL"] = "http://gh.example/token"
    let never = Answering(200)
    #expect(await failure(plain, never) == "no-token" && never.count.withLock { $0 } == 0, "the request token goes over https only")
    #expect(await failure(["AWS_ROLE_ARN": "arn:aws:iam::1:role/ci", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent"], never) == "no-token")
  }

  @Test func aWebIdentityTokenFileIsReadBoundedAndTrimmed() throws {
    let file = FileManager.default.temporaryDirectory.appending(path: "odr-token-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: file) }
    try Data("  eyJ.token.sig \n".utf8).write(to: file)
    #expect(try AWSCredentialChain.readToken(file.path) == "eyJ.token.sig")
    try Data(" \n".utf8).write(to: file)
    #expect(throws: AWSError.self) { try AWSCredentialChain.readToken(file.path) }
    try Data(count: 65 << 10).write(to: file)
    #expect { try AWSCredentialChain.readToken(file.path) } throws: { ($0 as? AWSError)?.message.contains("larger than 64 KiB") == true }
  }

  @Test func gitHubsTokenAnswerAndTheFormEncoding() {
    #expect(AWSCredentialChain.gitHubTokenValue(Data(#"{"count": 1, "value": "eyJ.a.b"}"#.utf8)) == "eyJ.a.b")
    #expect(AWSCredentialChain.gitHubTokenValue(Data(#"{"value": ""}"#.utf8)) == nil)
    #expect(AWSCredentialChain.gitHubTokenValue(Data("not json".utf8)) == nil)
    let request = STSWebIdentity.request(role: "arn:aws:iam::1:role/a b+c~é", token: "t", sessionName: "s", endpoint: URL(string: "https://sts.amazonaws.com/")!)
    let form = String(decoding: request.body, as: UTF8.self).split(separator: "&")
    #expect(form.contains("RoleArn=arn%3Aaws%3Aiam%3A%3A1%3Arole%2Fa%20b%2Bc~%C3%A9"), "\(form)")
  }
}

extension AWSCallsTests {
  /// A hostile endpoint that echoes the request gets nothing of its
  /// secrets quoted: not whole, not twelve characters of them.
  @Test func aRoleIsAssumedOncePerProcessWhoeverAsks() async throws {
    let file = FileManager.default.temporaryDirectory.appending(path: "odr-token-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: file) }
    try Data("eyJ.token.sig".utf8).write(to: file)
    let sts = Answering(200, "<Credentials><AccessKeyId>ASIA1</AccessKeyId><SecretAccessKey>s</SecretAccessKey><SessionToken>t</SessionToken></Credentials>")
    let environment = ["AWS_ROLE_ARN": "arn:aws:iam::1:role/once-\(UUID().uuidString.prefix(8))", "AWS_WEB_IDENTITY_TOKEN_FILE": file.path]
    let first = try #require(AWSCredentialChain.find(in: environment, http: sts))
    let second = try #require(AWSCredentialChain.find(in: environment, http: Answering(500)))
    let (one, two) = (try await first.credentials(), try await second.credentials())
    #expect(one.accessKeyID == "ASIA1" && two.accessKeyID == "ASIA1")
    #expect(sts.count.withLock { $0 } == 1)
    var elsewhere = environment
    elsewhere["AWS_REGION"] = "eu-west-3"
    #expect(AWSCredentialChain.find(in: elsewhere, http: sts) !== first, "another STS endpoint is another chain")
    var named = environment
    named["AWS_ROLE_SESSION_NAME"] = "tenant-b"
    #expect(AWSCredentialChain.find(in: named, http: sts) !== first, "another session name is another chain")
    try Data("eyJ.another.token".utf8).write(to: file)
    #expect(AWSCredentialChain.find(in: environment, http: sts) !== first, "another token at the same path is another chain")
    // Its description names the source, never the GitHub request token.
    let github = try #require(AWSCredentialChain.find(in: ["AWS_ROLE_ARN": "arn:aws:iam::1:role/gh", "ACTIONS_ID_TOKEN_REQUEST_URL": "https://gh/t",
                                                          "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "request-secret-123"], http: sts))
    for text in ["\(github)", String(reflecting: github), "\(Mirror(reflecting: github).children.map { "\($0.value)" })"] {
      #expect(!text.contains("request-secret-123") && text.contains("role/gh"), "\(text)")
    }
  }

  /// Two callers at once wait for the same exchange.
  @Test func concurrentCallersShareOneExchange() async throws {
    let file = FileManager.default.temporaryDirectory.appending(path: "odr-token-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: file) }
    try Data("eyJ.token.sig".utf8).write(to: file)
    let sts = Answering(200, "<Credentials><AccessKeyId>ASIA2</AccessKeyId><SecretAccessKey>s</SecretAccessKey><SessionToken>t</SessionToken></Credentials>")
    let chain = try #require(AWSCredentialChain.find(in: ["AWS_ROLE_ARN": "arn:aws:iam::1:role/many-\(UUID().uuidString.prefix(8))",
                                                         "AWS_WEB_IDENTITY_TOKEN_FILE": file.path], http: sts))
    let ids = try await withThrowingTaskGroup(of: String.self) { group in
      for _ in 0..<8 { group.addTask { try await chain.credentials().accessKeyID } }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    #expect(ids == Array(repeating: "ASIA2", count: 8) && sts.count.withLock { $0 } == 1)
    #expect(await chain.knownSecrets() == ["ASIA2", "s", "t"])
  }

  @Test func aStoreThatIsNotAWSsIsReadAsTheRoleOnlyWhereSTSIsNamed() throws {
    let role = ["AWS_ROLE_ARN": "arn:aws:iam::1:role/ci", "AWS_WEB_IDENTITY_TOKEN_FILE": "/run/token", "HOME": "/home/me",
                "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent"]
    #expect(try S3Access.fromEnvironment(role).role?["HOME"] == "/home/me")
    #expect(try S3Access.fromEnvironment(role.merging(["AWS_ENDPOINT_URL": "https://r2.example"]) { $1 }).role == nil)
    #expect(try S3Access.fromEnvironment(role, endpoint: "https://minio.example").role == nil)
    #expect(try S3Access.fromEnvironment(role.merging(["AWS_ENDPOINT_URL": "http://127.0.0.1:5000", "AWS_ENDPOINT_URL_STS": "http://127.0.0.1:5000"]) { $1 }).role != nil)
    // GitHub's request URL without its token names no role: the profile (here none) is used, as KMS does.
    #expect(try S3Access.fromEnvironment(["AWS_ROLE_ARN": "arn:aws:iam::1:role/ci", "ACTIONS_ID_TOKEN_REQUEST_URL": "https://gh/t",
                                          "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent"]).role == nil)
  }

  @Test(arguments: ["s3://my-bucket/apps", "s3://My_Old.Bucket-1/x", "s3://b"])
  func aBucketNameIsABucketsName(text: String) throws {
    try S3Access.checkBucket(of: try #require(URL(string: text)))
  }

  @Test(arguments: ["s3://127.0.0.1%3A18081%2Fx%23/prefix", "s3://a%2Eb/x", "s3:///x", "s3://user@bucket/x".replacingOccurrences(of: "user@", with: "%40")])
  func notABucketsName(text: String) throws {
    #expect(throws: ResourceError.self) { try S3Access.checkBucket(of: try #require(URL(string: text))) }
  }

  @Test func anAnswerThatQuotesARequestSecretIsNotQuoted() throws {
    let token = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJyZXBvIn0.c2lnbmF0dXJl"
    let sts = """
      <ErrorResponse><Error><Code>AccessDenied</Code><Message>token ...\(token.dropFirst(20).prefix(14))... refused</Message></Error></ErrorResponse>
      """
    #expect {
      try STSWebIdentity.credentials(from: HTTPExchangeResponse(status: 403, body: Data(sts.utf8)), role: "r", tokenSource: "t", hiding: [token])
    } throws: { error in
      let message = (error as? AWSError)?.message ?? ""
      return message.contains("(the answer quotes the request; not shown)") && !message.contains(token.dropFirst(20).prefix(12))
    }
    let arn = try #require(KMSKeyARN("arn:aws:kms:us-east-1:123456789012:key/k"))
    let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    let kms = #"{"__type":"\#(secret.prefix(20).filter(\.isLetter))","message":"bad signature for \#(secret)"}"#
    let error = AWSKMS.failure(HTTPExchangeResponse(status: 400, body: Data(kms.utf8)), action: "Decrypt", arn: arn, context: [:],
                               credentials: "c", hiding: [secret])
    #expect(!error.message.contains(secret.prefix(12)) && error.message.contains("an unnamed error"), "\(error.message)")
    // Quoting what is not a secret still works.
    #expect(AWSMessage.clean("User is not authorized", hiding: [secret, ""]) == "User is not authorized")
  }
}

extension AWSCallsTests {
  @Test func s3AccessTakesTheRoleAfterTheVariablesAndNeverPrintsItsTokens() throws {
    let token = "gh-request-\(UUID().uuidString)"
    let access = try S3Access.fromEnvironment(["AWS_ROLE_ARN": "arn:aws:iam::1:role/ci", "ACTIONS_ID_TOKEN_REQUEST_URL": "https://gh/token",
                                               "ACTIONS_ID_TOKEN_REQUEST_TOKEN": token, "ODR_IDENTITY": "AGE-SECRET-KEY-1X", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent"])
    #expect(access.credentials == nil && access.role?["AWS_ROLE_ARN"] == "arn:aws:iam::1:role/ci" && access.role?["ODR_IDENTITY"] == nil)
    for text in ["\(access)", String(reflecting: access), "\(Mirror(reflecting: access).children.map { "\($0.value)" })"] {
      #expect(!text.contains(token) && text.contains("role/ci"), "\(text)")
    }
    let keys = try S3Access.fromEnvironment(["AWS_ACCESS_KEY_ID": "AKIA", "AWS_SECRET_ACCESS_KEY": "s", "AWS_ROLE_ARN": "arn:aws:iam::1:role/ci",
                                             "AWS_WEB_IDENTITY_TOKEN_FILE": "/run/token"])
    #expect(keys.credentials?.accessKeyID == "AKIA" && keys.role == nil)
  }
}
