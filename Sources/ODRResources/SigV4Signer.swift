public import FoundationEssentials
import Crypto
import ODRURL

/// AWS Signature Version 4 for S3 requests (header-based authentication),
/// written over swift-crypto's HMAC-SHA256.
///
/// The signed headers are exactly the ones passed in, plus `host`,
/// `x-amz-date`, `x-amz-content-sha256` and, with temporary credentials,
/// `x-amz-security-token`. S3 object keys are encoded once (S3 does not
/// double-encode path segments, unlike other AWS services).
public struct SigV4Signer: Sendable {
  /// The hex SHA-256 of an empty body.
  public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

  public let credentials: AWSCredentials
  public let region: String
  public let service: String

  public init(credentials: AWSCredentials, region: String, service: String = "s3") {
    self.credentials = credentials
    self.region = region
    self.service = service
  }

  /// The headers to send for a request: `headers` as given plus the ones
  /// signing adds, `Authorization` last. `payloadHash` is the hex SHA-256
  /// of the body (or `UNSIGNED-PAYLOAD`).
  public func sign(method: String, url: URL, headers: [(String, String)], payloadHash: String, date: Date) -> [(String, String)] {
    let amzDate = Self.timestamp(date)
    let day = String(amzDate.prefix(8))
    var all = headers
    all.append(("host", Self.hostHeader(url)))
    all.append(("x-amz-date", amzDate))
    all.append(("x-amz-content-sha256", payloadHash))
    if let token = credentials.sessionToken { all.append(("x-amz-security-token", token)) }
    let canonical = all.map { ($0.0.lowercased(), $0.1.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")) }
      .sorted { $0.0 < $1.0 }
    let signedHeaders = canonical.map(\.0).joined(separator: ";")
    let request = [
      method,
      Self.canonicalPath(url),
      Self.canonicalQuery(url),
      canonical.map { "\($0.0):\($0.1)\n" }.joined(),
      signedHeaders,
      payloadHash,
    ].joined(separator: "\n")
    let scope = "\(day)/\(region)/\(service)/aws4_request"
    let stringToSign = "AWS4-HMAC-SHA256\n\(amzDate)\n\(scope)\n\(Self.hex(SHA256.hash(data: Data(request.utf8))))"
    var key = SymmetricKey(data: Data("AWS4\(credentials.secretAccessKey)".utf8))
    for part in [day, region, service, "aws4_request"] {
      key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
    }
    let signature = Self.hex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key))
    all.append(("Authorization", "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope),SignedHeaders=\(signedHeaders),Signature=\(signature)"))
    return all
  }

  /// The `Host` header for `url`: the port only when it is not the
  /// scheme's default (as HTTP clients send it).
  static func hostHeader(_ url: URL) -> String {
    let host = url.host ?? ""
    guard let port = url.port, port != (url.scheme == "https" ? 443 : 80) else { return host }
    return "\(host):\(port)"
  }

  /// `20130524T000000Z`.
  static func timestamp(_ date: Date) -> String {
    // ISO 8601 in UTC (`2013-05-24T00:00:00Z`) without its separators.
    // Not Calendar and TimeZone: their time zones come from
    // FoundationInternationalization, which odr does not link (without it
    // `TimeZone(identifier: "UTC")` is nil).
    String(date.formatted(.iso8601).filter { !"-:".contains($0) })
  }

  /// The URL's path, each byte outside RFC 3986's unreserved set encoded
  /// once (`/` kept).
  static func canonicalPath(_ url: URL) -> String {
    let path = url.path(percentEncoded: false)
    return path.isEmpty ? "/" : PercentEncoding.encode(path, keepSlash: true)
  }

  /// The query's name=value pairs, encoded and sorted.
  static func canonicalQuery(_ url: URL) -> String {
    guard let query = url.query(percentEncoded: false), !query.isEmpty else { return "" }
    return query.split(separator: "&").map { pair in
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      return PercentEncoding.encode(String(parts[0])) + "=" + (parts.count > 1 ? PercentEncoding.encode(String(parts[1])) : "")
    }.sorted().joined(separator: "&")
  }

  package static func hex<D: Sequence>(_ bytes: D) -> String where D.Element == UInt8 {
    bytes.map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
  }
}
