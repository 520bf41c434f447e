package import FoundationEssentials
import ODRBase
import ODRURL
import ODRCatalog
import Crypto
import Synchronization

/// AWS credentials found as the AWS SDKs find them, in this order: the
/// variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
/// `AWS_SESSION_TOKEN`); a web identity (`AWS_ROLE_ARN` +
/// `AWS_WEB_IDENTITY_TOKEN_FILE`: EKS, GitLab's `id_tokens`,
/// configure-aws-credentials), exchanged with STS; GitHub Actions' OIDC
/// token (`ACTIONS_ID_TOKEN_REQUEST_URL` + `_TOKEN`, audience
/// `sts.amazonaws.com`) when `AWS_ROLE_ARN` is set; the shared credentials
/// file's profile. Temporary credentials live in this object's memory only,
/// never in the keyring or on disk, and are asked for once per process
/// (until they are about to expire).
public actor AWSCredentialChain {
  /// Where the credentials come from (it holds secrets: GitHub's request
  /// token, fixed keys; never printed, ``sourceName`` says it in words).
  package enum Source: Sendable {
    case fixed(AWSCredentials)
    case webIdentity(role: String, tokenFile: String)
    case gitHubOIDC(role: String, url: String, requestToken: String)
    /// `AWS_ROLE_ARN` with nothing to assume it with: said when asked.
    case noToken(role: String)
  }

  /// The audience GitHub's OIDC token is asked for (AWS's own).
  package static let audience = "sts.amazonaws.com"

  package nonisolated let source: Source
  private let http: any HTTPExchanging
  private let environment: [String: String]
  private var cached: (credentials: AWSCredentials, expires: Date?)?
  private var pending: Task<(AWSCredentials, expires: Date?), any Error>?

  private init(source: Source, http: any HTTPExchanging, environment: [String: String]) {
    (self.source, self.http, self.environment) = (source, http, environment)
  }

  /// The chain `environment` sets up, nil when it names no credentials at
  /// all. Nothing is asked of STS or GitHub until ``credentials()`` (a
  /// token file is read, to tell chains apart).
  public static func find(in environment: [String: String], http: any HTTPExchanging) -> AWSCredentialChain? {
    let source: Source
    if let fixed = AWSCredentials.fromVariables(environment) {
      source = .fixed(fixed)
    } else if let role = environment.nonEmpty("AWS_ROLE_ARN"), let file = environment.nonEmpty("AWS_WEB_IDENTITY_TOKEN_FILE") {
      source = .webIdentity(role: role, tokenFile: file)
    } else if let role = environment.nonEmpty("AWS_ROLE_ARN"), let url = environment.nonEmpty("ACTIONS_ID_TOKEN_REQUEST_URL"), let token = environment.nonEmpty("ACTIONS_ID_TOKEN_REQUEST_TOKEN") {
      source = .gitHubOIDC(role: role, url: url, requestToken: token)
    } else if let profile = AWSCredentials.fromProfile(environment) {
      source = .fixed(profile)
    } else if let role = environment.nonEmpty("AWS_ROLE_ARN") {
      source = .noToken(role: role)
    } else {
      return nil
    }
    // A role is assumed once per process, whoever asks — the catalog's
    // bucket and the pack's KMS key share the role's credentials — but
    // only by a caller that would ask STS the very same thing.
    guard let key = SharedKey(source, environment: environment) else {
      return AWSCredentialChain(source: source, http: http, environment: environment)
    }
    return shared.withLock { chains in
      if let chain = chains[key] { return chain }
      let chain = AWSCredentialChain(source: source, http: http, environment: environment)
      chains[key] = chain
      return chain
    }
  }

  /// Whether `environment` names a role and a token to assume it with (a
  /// token file, or GitHub's request URL and token).
  package static func namesRole(_ environment: [String: String]) -> Bool {
    environment.nonEmpty("AWS_ROLE_ARN") != nil
      && (environment.nonEmpty("AWS_WEB_IDENTITY_TOKEN_FILE") != nil
          || (environment.nonEmpty("ACTIONS_ID_TOKEN_REQUEST_URL") != nil && environment.nonEmpty("ACTIONS_ID_TOKEN_REQUEST_TOKEN") != nil))
  }

  /// Everything an STS exchange depends on: the role, the session name,
  /// where STS is asked, and the token — its file's content or GitHub's
  /// request token, as SHA-256 digests (never kept as they are).
  private struct SharedKey: Hashable {
    let role: String
    let session: String?
    let place: [String?]
    let token: String

    init?(_ source: Source, environment: [String: String]) {
      let token: String
      switch source {
      case .webIdentity(let role, let file):
        self.role = role
        // unreadable: no digest to share by; the chain says why when asked
        let content = dropping(.isTheAnswer) { try FileTransport().dataSync(at: URL(filePath: file), limit: 64 << 10) } ?? Data()
        token = "file \(file) " + FileIO.hex(SHA256.hash(data: content))
      case .gitHubOIDC(let role, let url, let requestToken):
        self.role = role
        token = "github \(url) " + FileIO.hex(SHA256.hash(data: Data(requestToken.utf8)))
      case .fixed, .noToken:
        return nil
      }
      self.token = token
      session = environment["AWS_ROLE_SESSION_NAME"]
      place = [AWSCredentials.region(in: environment), environment["AWS_ENDPOINT_URL_STS"], environment["AWS_ENDPOINT_URL"]]
    }
  }

  /// The chains that assume a role, by everything their exchange depends on.
  private static let shared = Mutex<[SharedKey: AWSCredentialChain]>([:])

  /// Where the credentials come from, for messages (never a value).
  public nonisolated var sourceName: String {
    switch source {
    case .fixed(let credentials): credentials.source
    case .webIdentity(let role, let file): "the role \(role), assumed with the web identity token in \(file) (AWS_ROLE_ARN, AWS_WEB_IDENTITY_TOKEN_FILE)"
    case .gitHubOIDC(let role, _, _): "the role \(role), assumed with this GitHub Actions job's OIDC token (AWS_ROLE_ARN, ACTIONS_ID_TOKEN_REQUEST_URL)"
    case .noToken(let role): "the role \(role) (AWS_ROLE_ARN), with no token to assume it"
    }
  }

  /// The credentials: the fixed ones, or the role's, asked of STS once
  /// (callers at the same time wait for the same exchange) and kept in
  /// memory until five minutes before they expire.
  public func credentials() async throws -> AWSCredentials {
    if let cached, cached.expires.map({ $0.timeIntervalSinceNow > 300 }) ?? true { return cached.credentials }
    if let pending { return try await pending.value.0 }
    let exchange = Task { try await self.fetch() }
    pending = exchange
    defer { pending = nil }
    let found = try await exchange.value
    cached = found
    return found.0
  }

  /// The secrets of the credentials in hand (none before the first
  /// exchange): what an error answer must never be quoted with.
  package func knownSecrets() -> [String] {
    guard let credentials = cached?.credentials else { return [] }
    return [credentials.accessKeyID, credentials.secretAccessKey, credentials.sessionToken ?? ""].filter { !$0.isEmpty }
  }

  private func fetch() async throws -> (AWSCredentials, expires: Date?) {
    switch source {
    case .fixed(let credentials):
      return (credentials, nil)
    case .webIdentity(let role, let file):
      return try await assume(role, token: try Self.readToken(file), tokenSource: file)
    case .gitHubOIDC(let role, let url, let requestToken):
      return try await assume(role, token: try await gitHubToken(url: url, requestToken: requestToken), tokenSource: "GitHub Actions' OIDC endpoint")
    case .noToken(let role):
      throw AWSError(.noToken, "AWS_ROLE_ARN is set (\(role)), but there is no token to assume it with: AWS_WEB_IDENTITY_TOKEN_FILE is not set, and this is not a GitHub Actions job that may ask for one (give the job `permissions: id-token: write`; GitLab: write the id_tokens variable to a file and set AWS_WEB_IDENTITY_TOKEN_FILE).")
    }
  }

  private func assume(_ role: String, token: String, tokenSource: String) async throws -> (AWSCredentials, expires: Date?) {
    let region = AWSCredentials.region(in: environment)
    let endpoint = try AWSEndpoint.url("sts", region: region, in: environment)
    let name = environment.nonEmpty("AWS_ROLE_SESSION_NAME") ?? "odr-\(Int(Date().timeIntervalSince1970))"
    let request = STSWebIdentity.request(role: role, token: token, sessionName: name, endpoint: endpoint)
    let response = try await http.exchange(request, limit: STSWebIdentity.answerLimit)
    return try STSWebIdentity.credentials(from: response, role: role, tokenSource: tokenSource, hiding: [token])
  }

  /// The token in `file`: a JWT, refreshed on disk by whoever wrote it, so
  /// read at each exchange.
  package static func readToken(_ file: String) throws -> String {
    let data: Data
    do { data = try FileTransport().dataSync(at: URL(filePath: file), limit: 64 << 10) } catch let error as ResourceError {
      let why = switch error.code {
      case .notFound: "there is no such file"
      case .integrity: "it is larger than 64 KiB, which no token is"
      default: "this user cannot read it"
      }
      throw AWSError(.noToken, "The web identity token file \(file) (AWS_WEB_IDENTITY_TOKEN_FILE) cannot be read: \(why). In CI it is written by the job's set-up (GitLab: id_tokens; Kubernetes: a projected service account token); check its path, or unset AWS_WEB_IDENTITY_TOKEN_FILE.")
    }
    let text = String(decoding: data, as: UTF8.self)
    let token = String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    guard !token.isEmpty else {
      throw AWSError(.noToken, "The web identity token file \(file) (AWS_WEB_IDENTITY_TOKEN_FILE) is empty; the job's OIDC token was not written to it.")
    }
    return token
  }

  /// This job's OIDC token from GitHub, for the audience sts.amazonaws.com.
  private func gitHubToken(url: String, requestToken: String) async throws -> String {
    let separator = url.contains("?") ? "&" : "?"
    guard let address = URL(string: url + separator + "audience=" + PercentEncoding.encode(Self.audience)),
          address.scheme == "https" || (address.scheme == "http" && Origin.isLoopback(address.host(percentEncoded: false) ?? "")) else {
      throw AWSError(.noToken, "ACTIONS_ID_TOKEN_REQUEST_URL is not an https URL; odr does not send the job's request token to it.")
    }
    let request = HTTPExchangeRequest(method: "GET", url: address, headers: [("Authorization", "bearer \(requestToken)"), ("Accept", "application/json")])
    let response = try await http.exchange(request, limit: 64 << 10)
    guard (200..<300).contains(response.status) else {
      guard response.status < 500 else {
        throw AWSError(.service, "GitHub's OIDC endpoint answered HTTP \(response.status) when asked for this job's token; try again.")
      }
      throw AWSError(.noToken, "GitHub's OIDC endpoint answered HTTP \(response.status) when asked for this job's token. Give the job `permissions: id-token: write` (docs/ci.md, \"No stored secret\").")
    }
    guard let token = Self.gitHubTokenValue(response.body) else {
      throw AWSError(.noToken, "GitHub's OIDC endpoint answered without a token (no \"value\" in its JSON).")
    }
    return token
  }

  /// `value` of GitHub's answer `{"count": …, "value": "<JWT>"}`.
  package static func gitHubTokenValue(_ body: Data) -> String? {
    struct Answer: Decodable { let value: String }
    // not the answer's shape: no token
    return dropping(.isTheAnswer) { try JSONDecoder().decode(Answer.self, from: body) }.flatMap { $0.value.isEmpty ? nil : $0.value }
  }
}

/// Said by where its credentials come from, never by value: its source and
/// environment hold GitHub's request token or fixed keys.
extension AWSCredentialChain: CustomStringConvertible, CustomReflectable {
  public nonisolated var description: String { "AWSCredentialChain(\(sourceName))" }
  public nonisolated var customMirror: Mirror { Mirror(self, children: ["source": sourceName]) }
}
