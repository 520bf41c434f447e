import ODRBase
public import FoundationEssentials
import ODRCatalog

/// How `s3://bucket/prefix` sources are reached: the credentials that sign
/// requests (none: anonymous, for public buckets), the region, and for
/// S3-compatible stores (MinIO, Ceph, R2, moto) an endpoint addressed
/// path-style. Without an endpoint, AWS's virtual-hosted addresses are used
/// (`https://BUCKET.s3.REGION.amazonaws.com/KEY`).
public struct S3Access: Sendable {
  public let credentials: AWSCredentials?
  public let region: String
  public let endpoint: URL?

  public init(credentials: AWSCredentials?, region: String, endpoint: URL?) {
    self.credentials = credentials
    self.region = region
    self.endpoint = endpoint
  }

  /// From the standard AWS variables (see ``AWSCredentials/find(in:)``);
  /// `endpoint` (odr.json's) wins over `AWS_ENDPOINT_URL_S3` and
  /// `AWS_ENDPOINT_URL`.
  public static func fromEnvironment(_ environment: [String: String], endpoint: String? = nil) throws -> S3Access {
    let url = try AWSEndpoint.configured("s3", in: environment, override: endpoint)
    return S3Access(credentials: AWSCredentials.find(in: environment), region: AWSCredentials.region(in: environment), endpoint: url)
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
  /// signed when there are credentials.
  package func headers(method: String, url: URL, headers: [(String, String)], payloadHash: String) -> [(String, String)] {
    guard let credentials else { return headers }
    return SigV4Signer(credentials: credentials, region: region).sign(method: method, url: url, headers: headers, payloadHash: payloadHash, date: Date())
  }

  /// What signed the requests, for messages: by name, never by value.
  package var credentialName: String {
    guard let credentials else { return "no AWS credentials (none in AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or an AWS_PROFILE; requests were unsigned)" }
    return "the AWS credentials from \(credentials.source) (access key \(credentials.accessKeyID.prefix(4))…)"
  }
}
