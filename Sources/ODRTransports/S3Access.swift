import ODRBase
public import FoundationEssentials
import ODRCatalog

/// How `s3://bucket/prefix` sources are reached: the credentials that sign
/// requests (none: anonymous, for public buckets), or a role the job
/// assumes with its web identity; the region; and for S3-compatible stores
/// (MinIO, Ceph, R2, moto) an endpoint addressed path-style. Without an
/// endpoint, AWS's virtual-hosted addresses are used
/// (`https://BUCKET.s3.REGION.amazonaws.com/KEY`).
public struct S3Access: Sendable {
  public let credentials: AWSCredentials?
  public let region: String
  public let endpoint: URL?
  /// When there are no fixed credentials: the variables that name a role
  /// and the web identity to assume it with (``AWSCredentialChain``, made by
  /// the transport, whose client asks STS). Only `AWS_*`, GitHub's token
  /// variables and `HOME` (where the profile file is) are kept.
  package let role: [String: String]?

  public init(credentials: AWSCredentials?, region: String, endpoint: URL?) {
    self.init(credentials: credentials, region: region, endpoint: endpoint, role: nil)
  }

  package init(credentials: AWSCredentials?, region: String, endpoint: URL?, role: [String: String]?) {
    (self.credentials, self.region, self.endpoint, self.role) = (credentials, region, endpoint, role)
  }

  /// From the standard AWS variables, in the AWS SDKs' order
  /// (``AWSCredentialChain``): `AWS_ACCESS_KEY_ID`…, a web identity
  /// (`AWS_ROLE_ARN` with `AWS_WEB_IDENTITY_TOKEN_FILE`, or GitHub's OIDC
  /// token), the shared credentials file's profile; `endpoint` (odr.json's)
  /// wins over `AWS_ENDPOINT_URL_S3` and `AWS_ENDPOINT_URL`. A store that
  /// is not AWS's (an endpoint is configured) is read as the role only when
  /// `AWS_ENDPOINT_URL_STS` says where to assume it: else the web identity
  /// token would go to that store's host (through `AWS_ENDPOINT_URL`) or
  /// AWS's credentials to a store that is not AWS.
  public static func fromEnvironment(_ environment: [String: String], endpoint: String? = nil) throws -> S3Access {
    let url = try AWSEndpoint.configured("s3", in: environment, override: endpoint)
    let region = AWSCredentials.region(in: environment)
    if let fixed = AWSCredentials.fromVariables(environment) {
      return S3Access(credentials: fixed, region: region, endpoint: url)
    }
    if AWSCredentialChain.namesRole(environment), url == nil || environment.nonEmpty("AWS_ENDPOINT_URL_STS") != nil {
      let role = environment.filter { $0.key.hasPrefix("AWS_") || $0.key.hasPrefix("ACTIONS_ID_TOKEN_REQUEST_") || $0.key == "HOME" }
      return S3Access(credentials: nil, region: region, endpoint: url, role: role)
    }
    return S3Access(credentials: AWSCredentials.fromProfile(environment), region: region, endpoint: url)
  }

  /// Refuses an `s3://` URL whose bucket is not a bucket's name (letters,
  /// digits, `.`, `-`, `_`; at most 255): what goes into a host name or a
  /// path must not be able to name another host.
  public static func checkBucket(of url: URL) throws {
    let bucket = url.host(percentEncoded: true) ?? ""
    guard (1...255).contains(bucket.count), bucket.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-_".contains($0)) }) else {
      throw ResourceError(.invalidSource, "'\(url.absoluteString.prefix(200))' does not name an S3 bucket: a bucket's name is letters, digits, '.', '-' and '_' (s3://BUCKET/PREFIX).")
    }
  }

  /// The chain that assumes ``role``, asking STS through `http`; nil
  /// without a role.
  package func roleChain(http: any HTTPExchanging) -> AWSCredentialChain? {
    role.flatMap { AWSCredentialChain.find(in: $0, http: http) }
  }

  /// The HTTP(S) address of `s3://bucket/key` (its query kept: a listing's
  /// `?list-type=2&prefix=…`).
  public func httpURL(for s3URL: URL) -> URL {
    let bucket = s3URL.host ?? ""
    let key = s3URL.path(percentEncoded: true)
    let query = s3URL.query(percentEncoded: true).map { "?\($0)" } ?? ""
    if let endpoint {
      let base = endpoint.absoluteString.hasSuffix("/") ? String(endpoint.absoluteString.dropLast()) : endpoint.absoluteString
      return URL(string: "\(base)/\(bucket)\(key)\(query)")!
    }
    return URL(string: "https://\(bucket).s3.\(region).amazonaws.com\(key)\(query)")!
  }

  /// The headers of a request to `url` (an address from ``httpURL(for:)``),
  /// signed when there are credentials: the fixed ones, else those
  /// `chain` (``roleChain(http:)``) gets for the role.
  package func headers(method: String, url: URL, headers: [(String, String)], payloadHash: String,
                       role chain: AWSCredentialChain? = nil) async throws -> [(String, String)] {
    var signer = credentials
    if signer == nil { signer = try await chain?.credentials() }
    guard let credentials = signer else { return headers }
    return SigV4Signer(credentials: credentials, region: region).sign(method: method, url: url, headers: headers, payloadHash: payloadHash, date: Date())
  }

  /// What signed the requests, for messages: by name, never by value.
  package var credentialName: String {
    if credentials == nil, let arn = role?["AWS_ROLE_ARN"] {
      return "the role \(arn), assumed with this job's web identity (AWS_ROLE_ARN)"
    }
    guard let credentials else { return "no AWS credentials (none in AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, a web identity or an AWS_PROFILE; requests were unsigned)" }
    return "the AWS credentials from \(credentials.source) (access key \(credentials.accessKeyID.prefix(4))…)"
  }
}

/// Said by name, never by value: fixed keys and the role's token
/// variables (GitHub's request token among them) stay out of any print.
extension S3Access: CustomStringConvertible, CustomReflectable {
  public var description: String { "S3Access(\(credentialName), region \(region), endpoint \(endpoint?.absoluteString ?? "AWS's"))" }
  public var customMirror: Mirror { Mirror(self, children: ["credentials": credentialName, "region": region]) }
}
