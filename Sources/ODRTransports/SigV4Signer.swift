public import FoundationEssentials
import Crypto
import ODRURL

/// AWS Signature Version 4 (header-based authentication), written over
/// swift-crypto's HMAC-SHA256 and held to the AWS SigV4 test suite
/// (Tests/Vectors/sigv4).
///
/// The canonical request follows the published rules: the path encoded
/// once (S3) or normalized first (other services); query parameters split
/// on the *encoded* `&` and `=`, each name and value decoded then encoded
/// again, sorted by name then value; header names lower-cased, values
/// trimmed with inner runs of white space collapsed, repeated headers
/// joined with commas in the order given, an IPv6 host in brackets.
public struct SigV4Signer: Sendable {
  /// The hex SHA-256 of an empty body.
  public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
  /// The payload hash of a body that is not hashed (S3 over HTTPS only).
  public static let unsignedPayload = "UNSIGNED-PAYLOAD"

  public let credentials: AWSCredentials
  public let region: String
  public let service: String
  /// Whether the path's `.` and `..` segments and repeated slashes are
  /// resolved before signing: every service but S3, whose object keys are
  /// taken literally.
  public var normalizesPath: Bool
  /// Whether `x-amz-content-sha256` is sent and signed: S3 requires it.
  public var sendsPayloadHash: Bool
  /// Whether a session token is signed (the default) or only sent, added
  /// after signing, as a few services ask.
  public var signsSessionToken = true

  public init(credentials: AWSCredentials, region: String, service: String = "s3") {
    self.credentials = credentials
    self.region = region
    self.service = service
    normalizesPath = service != "s3"
    sendsPayloadHash = service == "s3"
  }

  /// A request as signing sees it.
  public struct Request: Sendable {
    public var method: String
    /// The path, not percent-encoded (`/a b/ሴ`).
    public var path: String
    /// The query as sent, percent-encoded, without `?` (empty for none).
    public var query: String
    /// The headers to send, `Host` among them.
    public var headers: [(String, String)]
    /// The hex SHA-256 of the body, or ``SigV4Signer/unsignedPayload``.
    public var payloadHash: String

    public init(method: String, path: String, query: String, headers: [(String, String)], payloadHash: String) {
      (self.method, self.path, self.query, self.headers, self.payloadHash) = (method, path, query, headers, payloadHash)
    }
  }

  /// What signing computed: the intermediate forms the test suite checks,
  /// and the headers to send.
  public struct Signature: Sendable {
    public var canonicalRequest: String
    public var stringToSign: String
    /// The hex signature.
    public var signature: String
    /// The request's headers plus those signing adds, `Authorization` last.
    public var headers: [(String, String)]
  }

  /// Signs `request` at `date`.
  public func sign(_ request: Request, date: Date) -> Signature {
    let amzDate = Self.timestamp(date)
    let day = String(amzDate.prefix(8))
    var all = request.headers
    all.append(("x-amz-date", amzDate))
    if sendsPayloadHash { all.append(("x-amz-content-sha256", request.payloadHash)) }
    if let token = credentials.sessionToken, signsSessionToken { all.append(("x-amz-security-token", token)) }
    let canonical = Self.canonicalHeaders(all)
    let signedHeaders = canonical.map(\.name).joined(separator: ";")
    let canonicalRequest = [
      request.method,
      Self.canonicalPath(request.path, normalize: normalizesPath),
      Self.canonicalQuery(request.query),
      canonical.map { "\($0.name):\($0.value)\n" }.joined(),
      signedHeaders,
      request.payloadHash,
    ].joined(separator: "\n")
    let scope = "\(day)/\(region)/\(service)/aws4_request"
    let stringToSign = Self.stringToSign(canonicalRequest, amzDate: amzDate, scope: scope)
    let signature = Self.signature(of: stringToSign, scope: scope, secret: credentials.secretAccessKey)
    if let token = credentials.sessionToken, !signsSessionToken { all.append(("x-amz-security-token", token)) }
    all.append(("Authorization", "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"))
    return Signature(canonicalRequest: canonicalRequest, stringToSign: stringToSign, signature: signature, headers: all)
  }

  /// The headers to send for a request to `url`: `headers` as given plus
  /// `host` and the ones signing adds, `Authorization` last.
  public func sign(method: String, url: URL, headers: [(String, String)], payloadHash: String, date: Date) -> [(String, String)] {
    var all = headers
    if !all.contains(where: { $0.0.lowercased() == "host" }) { all.append(("host", Self.hostHeader(url))) }
    let request = Request(method: method, path: url.path(percentEncoded: false), query: url.query(percentEncoded: true) ?? "",
                          headers: all, payloadHash: payloadHash)
    return sign(request, date: date).headers
  }

  /// The string a request's signature signs: the algorithm, the time
  /// (`20130524T000000Z`), the scope (`20130524/us-east-1/s3/aws4_request`)
  /// and the canonical request's hex SHA-256.
  package static func stringToSign(_ canonicalRequest: String, amzDate: String, scope: String) -> String {
    "AWS4-HMAC-SHA256\n\(amzDate)\n\(scope)\n\(payloadHash(Data(canonicalRequest.utf8)))"
  }

  /// The hex HMAC of `stringToSign` with the key derived from `secret`
  /// for `scope` (day, region, service, `aws4_request`).
  package static func signature(of stringToSign: String, scope: String, secret: String) -> String {
    var key = SymmetricKey(data: Data("AWS4\(secret)".utf8))
    for part in scope.split(separator: "/", omittingEmptySubsequences: false) {
      key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
    }
    return hex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key))
  }

  /// The `Host` header for `url`: an IPv6 address in brackets, the port
  /// only when it is not the scheme's default (as HTTP clients send it).
  package static func hostHeader(_ url: URL) -> String {
    var host = url.host(percentEncoded: true) ?? ""
    if host.contains(":") && !host.hasPrefix("[") { host = "[\(host)]" }
    guard let port = url.port, port != (url.scheme == "https" ? 443 : 80) else { return host }
    return "\(host):\(port)"
  }

  /// `20130524T000000Z`.
  package static func timestamp(_ date: Date) -> String {
    // ISO 8601 in UTC (`2013-05-24T00:00:00Z`) without its separators.
    // Not Calendar and TimeZone: their time zones come from
    // FoundationInternationalization, which odr does not link (without it
    // `TimeZone(identifier: "UTC")` is nil).
    String(date.formatted(.iso8601).filter { !"-:".contains($0) })
  }

  /// Header names lower-cased and sorted; values trimmed, inner white space
  /// (folded lines included) collapsed to one space; a repeated header's
  /// values joined with commas in the order given.
  package static func canonicalHeaders(_ headers: [(String, String)]) -> [(name: String, value: String)] {
    var values: [String: [String]] = [:]
    for (name, value) in headers {
      let collapsed = value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }).joined(separator: " ")
      values[name.lowercased(), default: []].append(collapsed)
    }
    return values.keys.sorted().map { ($0, values[$0]!.joined(separator: ",")) }
  }

  /// The path with every byte outside RFC 3986's unreserved set encoded
  /// once (`/` kept); with `normalize`, `.`, `..` and empty segments
  /// resolved first (a trailing slash kept).
  package static func canonicalPath(_ path: String, normalize: Bool) -> String {
    guard !path.isEmpty else { return "/" }
    var resolved = path
    if normalize {
      var segments: [Substring] = []
      for segment in path.split(separator: "/", omittingEmptySubsequences: true) {
        switch segment {
        case ".": continue
        case "..": _ = segments.popLast()
        default: segments.append(segment)
        }
      }
      resolved = "/" + segments.joined(separator: "/")
      if path.hasSuffix("/") && !segments.isEmpty { resolved += "/" }
    }
    return PercentEncoding.encode(resolved, keepSlash: true)
  }

  /// The query's parameters, split on the encoded `&` and `=` (so an
  /// encoded `%26` stays inside its value), each part decoded and encoded
  /// again, sorted by name and then value.
  package static func canonicalQuery(_ query: String) -> String {
    guard !query.isEmpty else { return "" }
    let pairs = query.split(separator: "&").map { pair in
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      return (name: encode(parts[0]), value: parts.count > 1 ? encode(parts[1]) : "")
    }
    return pairs.sorted { ($0.name, $0.value) < ($1.name, $1.value) }.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
  }

  /// Percent-decodes `part` and encodes it the SigV4 way.
  private static func encode(_ part: Substring) -> String {
    String(decoding: PercentEncoding.encode(PercentEncoding.decode(part)), as: UTF8.self)
  }

  /// The hex SHA-256 of a body: its payload hash.
  public static func payloadHash(_ body: some DataProtocol) -> String {
    hex(SHA256.hash(data: body))
  }

  package static func hex<D: Sequence>(_ bytes: D) -> String where D.Element == UInt8 {
    bytes.map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
  }
}
