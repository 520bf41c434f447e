import ODRKeyFormat
import ODRTransports
import ODRURL

/// An AWS credential among a run's keys, and how the proxy re-signs the
/// requests a child signed with its placeholders (AWS Signature Version 4).
///
/// The credential is the keys whose variables are `AWS_ACCESS_KEY_ID` and
/// `AWS_SECRET_ACCESS_KEY` (and, for temporary credentials,
/// `AWS_SESSION_TOKEN`), bound by `hosts` like any key. The child signs
/// with the placeholders; for a request to the secret's hosts whose
/// credential names the access key id's placeholder, the proxy first checks
/// that signature with the placeholder secret — so it signs only what the
/// child signed, nothing changed on the way — then puts the real access key
/// id and session token in place and signs the same canonical request with
/// the real secret: the `Authorization` header, or a presigned URL's
/// `X-Amz-*` parameters.
///
/// Bodies are signed as the child signed them: a hex SHA-256 or
/// `UNSIGNED-PAYLOAD` in `x-amz-content-sha256` (S3), `aws-chunked` bodies
/// with `STREAMING-UNSIGNED-PAYLOAD-TRAILER` (their trailer is in the body
/// and goes on as it is), the body's own hash where no header names it
/// (every other service). Signed chunks (`STREAMING-AWS4-HMAC-SHA256-PAYLOAD`),
/// whose every chunk carries a signature made with the secret, are refused
/// with a message that says how to turn them off.
struct SigV4Resigner: Sendable {
  let accessKeyID: ProxyBinding
  let secret: ProxyBinding
  let sessionToken: ProxyBinding?

  /// The credential among `bindings`, or nil when they hold none.
  init?(_ bindings: [ProxyBinding]) {
    func named(_ variable: String) -> ProxyBinding? { bindings.first { VariableName.of($0.key) == variable } }
    guard let accessKeyID = named("AWS_ACCESS_KEY_ID"), let secret = named("AWS_SECRET_ACCESS_KEY") else { return nil }
    (self.accessKeyID, self.secret, sessionToken) = (accessKeyID, secret, named("AWS_SESSION_TOKEN"))
  }

  /// The credential's keys: each must be allowed where a request is re-signed.
  var bindings: [ProxyBinding] { [accessKeyID, secret] + (sessionToken.map { [$0] } ?? []) }

  /// The most headers a signature may name (AWS's SDKs sign a handful).
  static let signedHeadersLimit = 64

  /// A request's SigV4 signature, as the request carries it.
  struct Signature: Equatable {
    /// In the query (a presigned URL), not the `Authorization` header.
    let presigned: Bool
    let accessKeyID: String
    /// `20130524/us-east-1/s3/aws4_request`.
    let scope: String
    let service: String
    let amzDate: String?
    /// The signed headers' names, as the request lists them.
    let signedHeaders: [String]
    let signature: String

    /// The signature of a request with these headers and query, or nil
    /// when it carries none (or not the SigV4 kind).
    init?(headers: [ProxyRequest.Header], query: [String]?) {
      // One of each: a second Authorization header or credential parameter
      // leaves the request as it is (not re-signed).
      let authorizations = headers.filter { $0.name.lowercased() == "authorization" }
      if authorizations.count == 1, let header = authorizations.first, header.value.hasPrefix("AWS4-HMAC-SHA256 ") {
        var fields: [String: String] = [:]
        for field in header.value.dropFirst("AWS4-HMAC-SHA256 ".count).split(separator: ",") {
          let parts = ProxyDecision.trimmed(field).split(separator: "=", maxSplits: 1)
          if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        let date = headers.first { $0.name.lowercased() == "x-amz-date" }.map { ProxyDecision.trimmed($0.value[...]) }
        self.init(presigned: false, credential: fields["Credential"], date: date, signedHeaders: fields["SignedHeaders"], signature: fields["Signature"])
      } else if let query {
        var fields: [String: String] = [:]
        for parameter in query {
          let parts = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
          guard parts.count == 2, parts[0].hasPrefix("X-Amz-") else { continue }
          guard fields[String(parts[0])] == nil else { return nil }
          fields[String(parts[0])] = String(decoding: PercentEncoding.decode(parts[1]), as: UTF8.self)
        }
        guard fields["X-Amz-Algorithm"] == "AWS4-HMAC-SHA256" else { return nil }
        self.init(presigned: true, credential: fields["X-Amz-Credential"], date: fields["X-Amz-Date"], signedHeaders: fields["X-Amz-SignedHeaders"],
                  signature: fields["X-Amz-Signature"])
      } else {
        return nil
      }
    }

    private init?(presigned: Bool, credential: String?, date: String?, signedHeaders: String?, signature: String?) {
      let parts = credential?.split(separator: "/", omittingEmptySubsequences: false) ?? []
      guard parts.count == 5, parts[4] == "aws4_request", let signedHeaders, let signature else { return nil }
      self.presigned = presigned
      accessKeyID = String(parts[0])
      scope = parts.dropFirst().joined(separator: "/")
      service = String(parts[3])
      amzDate = date
      self.signedHeaders = signedHeaders.split(separator: ";").map(String.init)
      self.signature = signature
    }
  }

  /// The request as it goes upstream — `headers` and `query` parameters,
  /// everything else the proxy does to it done — with the real credential
  /// in place and signed again; a reason when the child's own signature
  /// (over `request` as it arrived) does not check out, or signs something
  /// the proxy changed.
  ///
  /// One canonical form per service, the one AWS checks: S3's path as sent
  /// (which must be encoded as S3 signs it), every other service's path
  /// normalized and encoded again. A signature the upstream would compute
  /// differently is refused here, not sent: AWS's refusal quotes the
  /// canonical request it expected, real credential and token included.
  func resign(_ request: ProxyRequest, _ signature: Signature, headers: [ProxyRequest.Header],
              query: [String]?) -> Result<(headers: [ProxyRequest.Header], query: [String]?, keys: [String]), SigV4Refusal> {
    guard let amzDate = signature.amzDate else { return .failure(SigV4Refusal("its SigV4 signature has no X-Amz-Date")) }
    let names = signature.signedHeaders
    guard names.count <= Self.signedHeadersLimit, zip(names, names.dropFirst()).allSatisfy({ $0 < $1 }), names.allSatisfy({ $0 == $0.lowercased() }) else {
      return .failure(SigV4Refusal("its SigV4 signature's signed headers are not \(Self.signedHeadersLimit) or fewer lower-case names in order"))
    }
    guard names.contains("host") else { return .failure(SigV4Refusal("its SigV4 signature does not sign the Host header")) }
    let contentHash = request.headers.first { $0.name.lowercased() == "x-amz-content-sha256" }.map { ProxyDecision.trimmed($0.value[...]) }
    if let contentHash, contentHash.hasPrefix("STREAMING-AWS4-") {
      return .failure(SigV4Refusal("its body is sent in signed chunks (\(contentHash)), which odr does not re-sign: let the client send an unsigned payload (the AWS SDKs do over https; Java and Go: disable chunked encoding or payload signing)"))
    }
    let s3 = signature.service.hasPrefix("s3")
    guard let payload = contentHash ?? (signature.presigned && s3 ? SigV4Signer.unsignedPayload : request.bodyHash) else {
      return .failure(SigV4Refusal("its SigV4 signature needs the body's hash, which the proxy did not compute"))
    }
    let (rawPath, _) = ProxyDecision.split(request.target)
    let path: String
    if s3 {
      path = rawPath.isEmpty ? "/" : rawPath
      guard path == SigV4Signer.canonicalPath(String(decoding: PercentEncoding.decode(path), as: UTF8.self), normalize: false) else {
        return .failure(SigV4Refusal("its path is not encoded as S3 signs it (each byte but A-Z a-z 0-9 - . _ ~ / percent-encoded, upper-case hex)"))
      }
    } else {
      path = SigV4Signer.canonicalPath(rawPath, normalize: true)
    }
    // The child's query, as it arrived: the signed parameters.
    let (_, arrived) = ProxyDecision.split(request.target)
    let childQuery = arrived.map { $0.split(separator: "&", omittingEmptySubsequences: false).map(String.init) }
    // A presigned URL's session token is signed; a few services (not S3)
    // add it after signing.
    let tokenInQuery = childQuery?.contains { $0.hasPrefix("X-Amz-Security-Token=") } == true
    let unsignedSets = [["X-Amz-Signature"]] + (tokenInQuery && !s3 ? [["X-Amz-Signature", "X-Amz-Security-Token"]] : [])
    let unsigned = unsignedSets.first { unsigned in
      Self.canonicalRequest(request.method, path: path, query: childQuery, unsigned: unsigned, headers: request.headers, signature: signature, payload: payload)
        .map { Self.sign($0, amzDate: amzDate, scope: signature.scope, secret: secret.placeholder.text) == signature.signature } ?? false
    }
    guard let unsigned else {
      if let missing = names.first(where: { name in !request.headers.contains { $0.name.lowercased() == name } }) {
        return .failure(SigV4Refusal("its SigV4 signature names the header \(ProxyDecision.printable(missing)), which the request does not carry"))
      }
      return .failure(SigV4Refusal("its SigV4 signature does not match the request signed with the placeholder secret: odr re-signs only what the command signed (was the request changed after signing, signed with another secret, or its path in another form than the service's?)"))
    }
    // What the child signed goes upstream as it signed it, but for the
    // credential the proxy puts in place.
    let credentialFields = ["X-Amz-Credential=", "X-Amz-Security-Token=", "X-Amz-Signature="]
    let others = { (query: [String]?) in (query ?? []).filter { parameter in !credentialFields.contains { parameter.hasPrefix($0) } } }
    if others(query) != others(childQuery) {
      return .failure(SigV4Refusal("its SigV4 signature covers the query, where the proxy put another key"))
    }
    for name in names where name != "x-amz-security-token" {
      let values = { (headers: [ProxyRequest.Header]) in headers.filter { $0.name.lowercased() == name }.map(\.value) }
      guard values(headers) == values(request.headers) else {
        return .failure(SigV4Refusal("its SigV4 signature covers the \(ProxyDecision.printable(name)) header, which the proxy changes\(name == "accept-encoding" ? " (it asks a host a key is bound to for identity): sign without it" : name == "range" || name == "if-range" ? " (a request that carries another key asks for the whole answer)" : "")"))
      }
    }

    // The same request with the real credential, signed with the real secret.
    var headers = headers
    var query = query
    var keys = [accessKeyID.key.name, secret.key.name]
    if let token = sessionToken {
      for index in headers.indices where headers[index].name.lowercased() == "x-amz-security-token" && headers[index].value == token.placeholder.text {
        headers[index].value = token.key.value
        keys.append(token.key.name)
      }
      for index in (query ?? []).indices where query![index].hasPrefix("X-Amz-Security-Token=")
        && PercentEncoding.decode(query![index].dropFirst("X-Amz-Security-Token=".count)) == Array(token.placeholder.text.utf8) {
        query![index] = "X-Amz-Security-Token=" + PercentEncoding.encode(token.key.value)
        keys.append(token.key.name)
      }
    }
    if signature.presigned, let index = query?.firstIndex(where: { $0.hasPrefix("X-Amz-Credential=") }) {
      query![index] = "X-Amz-Credential=" + PercentEncoding.encode(accessKeyID.key.value + "/" + signature.scope)
    }
    guard let real = Self.canonicalRequest(request.method, path: path, query: query, unsigned: unsigned, headers: headers,
                                           signature: signature, payload: payload) else {
      return .failure(SigV4Refusal("its SigV4 signature names a header the proxy does not forward"))
    }
    let resigned = Self.sign(real, amzDate: amzDate, scope: signature.scope, secret: secret.key.value)
    if signature.presigned {
      if let index = query?.firstIndex(where: { $0.hasPrefix("X-Amz-Signature=") }) { query![index] = "X-Amz-Signature=" + resigned }
    } else if let index = headers.firstIndex(where: { $0.name.lowercased() == "authorization" }) {
      headers[index].value = "AWS4-HMAC-SHA256 Credential=\(accessKeyID.key.value)/\(signature.scope), SignedHeaders=\(names.joined(separator: ";")), Signature=\(resigned)"
    }
    return .success((headers, query, Array(Set(keys)).sorted()))
  }

  private static func sign(_ canonicalRequest: String, amzDate: String, scope: String, secret: String) -> String {
    SigV4Signer.signature(of: SigV4Signer.stringToSign(canonicalRequest, amzDate: amzDate, scope: scope), scope: scope, secret: secret)
  }

  /// The canonical request of a request with these parts (the query
  /// without the parameters named `unsigned`), signed as `signature` says;
  /// nil when a header it signs is absent.
  private static func canonicalRequest(_ method: String, path: String, query: [String]?, unsigned: [String], headers: [ProxyRequest.Header],
                                       signature: Signature, payload: String) -> String? {
    var signed: [(String, String)] = []
    for name in signature.signedHeaders {
      let values = headers.filter { $0.name.lowercased() == name }
      guard !values.isEmpty else { return nil }
      signed += values.map { (name, $0.value) }
    }
    let signedQuery = (query ?? []).filter { parameter in !unsigned.contains { parameter.hasPrefix($0 + "=") } }.joined(separator: "&")
    let canonical = SigV4Signer.canonicalHeaders(signed)
    return [method, path, SigV4Signer.canonicalQuery(signedQuery), canonical.map { "\($0.name):\($0.value)\n" }.joined(),
            signature.signedHeaders.joined(separator: ";"), payload].joined(separator: "\n")
  }
}

/// Why a SigV4-signed request is not re-signed.
struct SigV4Refusal: Error, Equatable {
  let reason: String
  init(_ reason: String) { self.reason = reason }
}
