import Foundation
import ODRKeyFormat
@testable import ODRProxy
import ODRTesting
import ODRTransports
import Testing

/// The proxy's re-signing of AWS requests: the child's signature, made
/// with placeholders, checked and replaced by the real credential's —
/// held to every case of the AWS SigV4 test suite (header and presigned
/// forms), and refused where it does not check out.
@Suite struct SigV4ResignerTests {
  static let real = AWSCredentials(accessKeyID: "AKIAREALREALREALREAL", secretAccessKey: "real/Secret+real/Secret+real/Secret+0123",
                                   sessionToken: "real-token/with+plus==", source: "test")

  /// The run's AWS credential standing for `real` (whose token only with
  /// `token`), bound to `hosts`; its placeholders `placeholders`' values, else new ones.
  static func bindings(_ placeholders: AWSCredentials? = nil, hosts: [String] = ["example.amazonaws.com"], token: Bool = true) -> [ProxyBinding] {
    func binding(_ variable: String, _ value: String, _ placeholder: String?) -> ProxyBinding {
      ProxyBinding(key: APIKey(name: variable, value: value, metadata: KeyMetadata(env: variable, hosts: hosts)), placeholder: placeholder.map(Placeholder.init(made:)))
    }
    return [binding("AWS_ACCESS_KEY_ID", real.accessKeyID, placeholders?.accessKeyID),
            binding("AWS_SECRET_ACCESS_KEY", real.secretAccessKey, placeholders?.secretAccessKey)]
      + (token ? [binding("AWS_SESSION_TOKEN", real.sessionToken!, placeholders?.sessionToken)] : [])
  }

  /// What the child holds: the bindings' placeholders as credentials.
  static func placeholders(_ bindings: [ProxyBinding]) -> AWSCredentials {
    let value = { (variable: String) in bindings.first { $0.key.name == variable }?.placeholder.text }
    return AWSCredentials(accessKeyID: value("AWS_ACCESS_KEY_ID")!, secretAccessKey: value("AWS_SECRET_ACCESS_KEY")!,
                          sessionToken: value("AWS_SESSION_TOKEN"), source: "placeholders")
  }

  static func proxyRequest(_ request: SigV4Vector.Request) -> ProxyRequest {
    let host = request.headers.first { $0.0.lowercased() == "host" }?.1 ?? ""
    var proxied = ProxyRequest(method: request.method, scheme: "https", host: host, port: 443, target: request.target,
                               headers: request.headers.map { .init($0.0, $0.1) })
    proxied.hashBody(Array(request.body.utf8))
    return proxied
  }

  static func header(_ forward: ProxyDecision.Forward, _ name: String) -> String? {
    forward.headers.first { $0.name.lowercased() == name }?.value
  }

  /// The suite's cases whose request line holds a raw space or UTF-8: no
  /// HTTP client sends one, and a request that carries a key with a URL
  /// the strict and the encoding parse disagree on is refused.
  static let rawTargets: Set<String> = ["get-space-normalized", "get-space-unnormalized", "get-utf8", "get-vanilla-utf8-query"]

  /// A case the suite signs without normalizing a path that normalizes to
  /// something else: every service but S3 normalizes, so the service would
  /// refuse the signature — and its refusal would quote the canonical
  /// request it expected, real token included. Refused here.
  static func signedUnnormalized(_ vector: SigV4Vector) throws -> Bool {
    let path = try vector.request("request.txt").path
    return !vector.context.normalize && SigV4Signer.canonicalPath(path, normalize: true) != SigV4Signer.canonicalPath(path, normalize: false)
  }

  /// The suite's credentials as the child's placeholders: its signed
  /// request (header form) is checked and signed again with the real
  /// secret — the same Authorization the signer makes for the real
  /// credential — and the result checks out as the real credential's.
  @Test(arguments: SigV4Vector.names) func everyHeaderSignedCaseOfTheSuiteIsResigned(_ name: String) throws {
    let vector = try SigV4Vector(name)
    let context = vector.context
    let suite = AWSCredentials(accessKeyID: context.credentials.access_key_id, secretAccessKey: context.credentials.secret_access_key,
                               sessionToken: context.credentials.token, source: "suite")
    let bindings = Self.bindings(suite, token: suite.sessionToken != nil)
    let decision = ProxyDecision.decide(Self.proxyRequest(try vector.request("header-signed-request.txt")), bindings: bindings)
    if Self.rawTargets.contains(name) {
      guard case .refuse(let refusal) = decision else { Issue.record("\(decision)"); return }
      #expect(refusal.status == 400 && refusal.reason.contains("ambiguous"))
      return
    }
    if try Self.signedUnnormalized(vector) {
      #expect(Self.refusal(decision)?.hasPrefix("403 its SigV4 signature does not match") == true, "\(decision)")
      return
    }
    guard case .forward(let forward) = decision else { Issue.record("\(name): \(decision)"); return }
    #expect(forward.keys == ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"] + (suite.sessionToken == nil ? [] : ["AWS_SESSION_TOKEN"]))
    let real = AWSCredentials(accessKeyID: Self.real.accessKeyID, secretAccessKey: Self.real.secretAccessKey,
                              sessionToken: suite.sessionToken == nil ? nil : Self.real.sessionToken, source: "real")
    var signer = SigV4Signer(credentials: real, region: context.region, service: context.service)
    signer.normalizesPath = context.normalize
    signer.sendsPayloadHash = context.sign_body
    signer.signsSessionToken = !(context.omit_session_token ?? false)
    let request = try vector.request("request.txt")
    let expected = signer.sign(SigV4Signer.Request(method: request.method, path: request.path, query: request.query, headers: request.headers,
                                                   payloadHash: SigV4Signer.payloadHash(Array(request.body.utf8))),
                               date: try Date(context.timestamp, strategy: .iso8601))
    #expect(Self.header(forward, "authorization") == expected.headers.last?.1)
    #expect(Self.header(forward, "x-amz-security-token") == (suite.sessionToken == nil ? nil : Self.real.sessionToken))
    try Self.checksOutAsTheRealCredential(forward, request, context: context)
  }

  /// The suite's presigned requests (query form), the same way.
  @Test(arguments: SigV4Vector.names) func everyPresignedCaseOfTheSuiteIsResigned(_ name: String) throws {
    let vector = try SigV4Vector(name)
    let context = vector.context
    let suite = AWSCredentials(accessKeyID: context.credentials.access_key_id, secretAccessKey: context.credentials.secret_access_key,
                               sessionToken: context.credentials.token, source: "suite")
    let request = try vector.request("query-signed-request.txt")
    let decision = ProxyDecision.decide(Self.proxyRequest(request), bindings: Self.bindings(suite, token: suite.sessionToken != nil))
    if Self.rawTargets.contains(name) {
      guard case .refuse(let refusal) = decision else { Issue.record("\(decision)"); return }
      #expect(refusal.status == 400)
      return
    }
    if try Self.signedUnnormalized(vector) {
      #expect(Self.refusal(decision)?.hasPrefix("403 its SigV4 signature does not match") == true, "\(decision)")
      return
    }
    guard case .forward(let forward) = decision else { Issue.record("\(name): \(decision)"); return }
    #expect(forward.keys.starts(with: ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]))
    #expect(forward.target.contains("X-Amz-Credential=\(Self.real.accessKeyID)%2F") && !forward.target.contains(suite.accessKeyID))
    #expect(!forward.target.contains(request.target.split(separator: "X-Amz-Signature=").last!))
    try Self.checksOutAsTheRealCredential(forward, request, context: context)
  }

  /// `forward`, given to a run whose placeholders are the real credential,
  /// is re-signed rather than refused: its signature is the real secret's.
  static func checksOutAsTheRealCredential(_ forward: ProxyDecision.Forward, _ request: SigV4Vector.Request, context: SigV4Vector.Context) throws {
    let other = AWSCredentials(accessKeyID: "AKIAOTHEROTHEROTHER0", secretAccessKey: "other", sessionToken: "other", source: "other")
    var again = Self.bindings(Self.real, token: context.credentials.token != nil)
    again = again.map { ProxyBinding(key: APIKey(name: $0.key.name, value: other.accessKeyID, metadata: $0.key.metadata), placeholder: $0.placeholder) }
    var proxied = ProxyRequest(method: request.method, scheme: "https", host: "example.amazonaws.com", port: 443, target: forward.target,
                               headers: forward.headers.filter { $0.name.lowercased() != "accept-encoding" })
    proxied.hashBody(Array(request.body.utf8))
    guard case .forward = ProxyDecision.decide(proxied, bindings: again) else {
      Issue.record("the re-signed request does not check out with the real credential: \(ProxyDecision.decide(proxied, bindings: again))")
      return
    }
  }

  /// A request the child signs with its placeholders, as an SDK does.
  static func signed(_ bindings: [ProxyBinding], method: String = "GET", host: String = "example.amazonaws.com", path: String = "/bucket/a b/ü.txt",
                     query: String = "", headers: [(String, String)] = [], payload: String = SigV4Signer.emptyPayloadHash,
                     service: String = "s3") -> ProxyRequest {
    let signer = SigV4Signer(credentials: placeholders(bindings), region: "us-east-1", service: service)
    let signed = signer.sign(SigV4Signer.Request(method: method, path: path, query: query, headers: [("Host", host)] + headers, payloadHash: payload),
                             date: Date())
    let target = SigV4Signer.canonicalPath(path, normalize: false) + (query.isEmpty ? "" : "?" + query)
    return ProxyRequest(method: method, scheme: "https", host: host, port: 443, target: target, headers: signed.headers.map { .init($0.0, $0.1) })
  }

  static func refusal(_ decision: ProxyDecision) -> String? {
    guard case .refuse(let refusal) = decision else { return nil }
    return "\(refusal.status) \(refusal.reason)"
  }

  @Test func aRequestChangedAfterSigningIsRefused() {
    let bindings = Self.bindings()
    var request = Self.signed(bindings)
    request.target = "/bucket/other.txt"
    #expect(Self.refusal(ProxyDecision.decide(request, bindings: bindings))?.hasPrefix("403 its SigV4 signature does not match") == true)
    var withoutHeader = Self.signed(bindings, headers: [("Range", "bytes=0-9")])
    withoutHeader.headers.removeAll { $0.name == "Range" }
    #expect(Self.refusal(ProxyDecision.decide(withoutHeader, bindings: bindings)) == "403 its SigV4 signature names the header range, which the request does not carry")
    // Signed with another secret than the placeholder (the child guessed the real one? it cannot; a key of its own).
    let forged = Self.signed(Self.bindings(AWSCredentials(accessKeyID: Self.placeholders(bindings).accessKeyID, secretAccessKey: "guess", source: "x")))
    #expect(Self.refusal(ProxyDecision.decide(forged, bindings: bindings))?.hasPrefix("403 its SigV4 signature does not match") == true)
  }

  /// The real signature is made over exactly what goes upstream: a signed
  /// part the proxy would change is refused (else the service refuses the
  /// signature and quotes the request it expected, the real token in it).
  @Test func whatTheProxyChangesMayNotBeSigned() {
    let bindings = Self.bindings()
    let encoding = Self.signed(bindings, headers: [("Accept-Encoding", "gzip")])
    #expect(Self.refusal(ProxyDecision.decide(encoding, bindings: bindings))
            == "403 its SigV4 signature covers the accept-encoding header, which the proxy changes (it asks a host a key is bound to for identity): sign without it")
    let weather = ProxyBinding(key: APIKey(name: "Weather", value: "w-secret", metadata: KeyMetadata(header: "X-Api-Key", hosts: ["example.amazonaws.com"])))
    let all = bindings + [weather]
    let other = Self.signed(all, headers: [("X-Api-Key", weather.placeholder.text)])
    #expect(Self.refusal(ProxyDecision.decide(other, bindings: all))?.hasPrefix("403 its SigV4 signature covers the x-api-key header, which the proxy changes") == true)
    let query = Self.signed(all, query: "k=\(weather.placeholder.text)")
    let maps = ProxyBinding(key: APIKey(name: "Maps", value: "m-secret", metadata: KeyMetadata(query: "k", hosts: ["example.amazonaws.com"])),
                            placeholder: weather.placeholder)
    #expect(Self.refusal(ProxyDecision.decide(query, bindings: bindings + [maps])) == "403 its SigV4 signature covers the query, where the proxy put another key")
  }

  @Test func aSignatureMustNameItsHeadersInOrderTheHostAmongThem() {
    let bindings = Self.bindings()
    for (from, to, reason) in [("SignedHeaders=host;", "SignedHeaders=", "does not sign the Host header"),
                               ("SignedHeaders=host;", "SignedHeaders=x-amz-date;host;", "are not 64 or fewer lower-case names in order"),
                               ("SignedHeaders=host;", "SignedHeaders=host;host;", "are not 64 or fewer lower-case names in order")] {
      var request = Self.signed(bindings)
      let index = request.headers.firstIndex { $0.name == "Authorization" }!
      request.headers[index].value = request.headers[index].value.replacingOccurrences(of: from, with: to)
      #expect(Self.refusal(ProxyDecision.decide(request, bindings: bindings))?.contains(reason) == true, "\(reason)")
    }
    // Two Authorization headers: not re-signed, goes on as it is.
    var twice = Self.signed(bindings)
    twice.headers.append(twice.headers.last!)
    guard case .forward(let forward) = ProxyDecision.decide(twice, bindings: bindings) else { Issue.record("refused"); return }
    #expect(forward.keys.isEmpty)
  }

  @Test func anS3PathMustBeEncodedAsS3SignsIt() {
    let bindings = Self.bindings()
    var request = Self.signed(bindings, path: "/bucket/a!b(c)")
    #expect(request.target == "/bucket/a%21b%28c%29")
    request.target = "/bucket/a!b(c)"
    #expect(Self.refusal(ProxyDecision.decide(request, bindings: bindings))?.hasPrefix("403 its path is not encoded as S3 signs it") == true)
  }

  @Test func everyKeyOfTheCredentialMustBeBoundWhereItIsResigned() {
    var bindings = Self.bindings()
    bindings[2] = ProxyBinding(key: APIKey(name: "AWS_SESSION_TOKEN", value: Self.real.sessionToken!,
                                           metadata: KeyMetadata(env: "AWS_SESSION_TOKEN", hosts: ["other.amazonaws.com"])), placeholder: bindings[2].placeholder)
    let request = Self.signed(bindings)
    guard case .forward(let forward) = ProxyDecision.decide(request, bindings: bindings) else { Issue.record("refused"); return }
    #expect(forward.keys.isEmpty && Self.header(forward, "authorization") == request.headers.last?.value)
  }

  @Test func signedChunksAreRefusedWithWhatToDoAndUnsignedTrailersPass() {
    let bindings = Self.bindings()
    let chunked = Self.signed(bindings, method: "PUT", headers: [("Content-Encoding", "aws-chunked")], payload: "STREAMING-AWS4-HMAC-SHA256-PAYLOAD")
    #expect(Self.refusal(ProxyDecision.decide(chunked, bindings: bindings))?.contains("signed chunks (STREAMING-AWS4-HMAC-SHA256-PAYLOAD), which odr does not re-sign") == true)
    let trailer = Self.signed(bindings, method: "PUT", headers: [("Content-Encoding", "aws-chunked"), ("X-Amz-Trailer", "x-amz-checksum-crc32")],
                              payload: "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
    guard case .forward(let forward) = ProxyDecision.decide(trailer, bindings: bindings) else { Issue.record("refused"); return }
    #expect(Self.header(forward, "content-encoding") == "aws-chunked" && Self.header(forward, "x-amz-content-sha256") == "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
    #expect(Self.header(forward, "authorization")?.hasPrefix("AWS4-HMAC-SHA256 Credential=\(Self.real.accessKeyID)/") == true)
  }

  @Test func anotherServiceSignsTheBodysHashAndItsPathNormalized() {
    let bindings = Self.bindings(hosts: ["sts.amazonaws.com"], token: false)
    let body = Array("Action=GetCallerIdentity&Version=2011-06-15".utf8)
    var request = Self.signed(bindings, method: "POST", host: "sts.amazonaws.com", path: "/", headers: [("Content-Type", "application/x-www-form-urlencoded")],
                              payload: SigV4Signer.payloadHash(body), service: "sts")
    request.hashBody(body)
    guard case .forward(let forward) = ProxyDecision.decide(request, bindings: bindings) else { Issue.record("refused"); return }
    #expect(forward.keys == ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"])
    // Another body than the one signed: the hash differs, refused.
    request.hashBody(Array("Action=AssumeRole".utf8))
    #expect(Self.refusal(ProxyDecision.decide(request, bindings: bindings))?.hasPrefix("403 its SigV4 signature does not match") == true)
  }

  @Test func elsewhereTheSignatureGoesOnAsItIsAndARealKeysIsLeftAlone() throws {
    let bindings = Self.bindings()
    // Not one of the credential's hosts: worthless there, said.
    let elsewhere = Self.signed(bindings, host: "other.example")
    guard case .forward(let forward) = ProxyDecision.decide(elsewhere, bindings: bindings) else { Issue.record("refused"); return }
    #expect(forward.keys.isEmpty && Self.header(forward, "authorization") == elsewhere.headers.last?.value)
    #expect(forward.notes.contains { $0.hasPrefix("placeholder of AWS_ACCESS_KEY_ID in the Authorization header, not substituted (other.example is not one of its hosts)") })
    // The user's own credential (not a placeholder): not odr's to sign.
    let own = Self.signed(Self.bindings(AWSCredentials(accessKeyID: "AKIAOWNOWNOWNOWNOWN0", secretAccessKey: "own", source: "own")))
    guard case .forward(let untouched) = ProxyDecision.decide(own, bindings: bindings) else { Issue.record("refused"); return }
    #expect(untouched.keys.isEmpty && Self.header(untouched, "authorization") == own.headers.last?.value)
  }

  @Test func aSuffixEntryCoversVirtualHostedBucketsAndARangeStaysSigned() {
    let bindings = Self.bindings(hosts: [".amazonaws.com"])
    let request = Self.signed(bindings, host: "my-bucket.s3.eu-west-1.amazonaws.com", path: "/key", headers: [("Range", "bytes=0-9")])
    guard case .forward(let forward) = ProxyDecision.decide(request, bindings: bindings) else { Issue.record("refused"); return }
    #expect(forward.keys == ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"] && forward.toBoundHost)
    #expect(Self.header(forward, "range") == "bytes=0-9" && Self.header(forward, "x-amz-security-token") == Self.real.sessionToken)
    // The domain itself is not under it.
    let bare = Self.signed(bindings, host: "amazonaws.com")
    guard case .forward(let notHere) = ProxyDecision.decide(bare, bindings: bindings) else { Issue.record("refused"); return }
    #expect(notHere.keys.isEmpty)
  }

  @Test func theCredentialIsItsVariablesAndItsIdAPlaceholderOfItsForm() throws {
    let bindings = Self.bindings()
    let aws = try #require(SigV4Resigner(bindings))
    #expect(aws.accessKeyID.key.name == "AWS_ACCESS_KEY_ID" && aws.secret.key.name == "AWS_SECRET_ACCESS_KEY" && aws.sessionToken != nil)
    #expect(SigV4Resigner(Array(bindings.dropFirst())) == nil)
    let id = bindings[0].placeholder.text
    #expect(id.count == 20 && id.hasPrefix("AKIA") && id != Self.real.accessKeyID)
    let secret = bindings[1].placeholder.text
    #expect(secret.count == 40 && secret != Self.real.secretAccessKey)
  }
}
