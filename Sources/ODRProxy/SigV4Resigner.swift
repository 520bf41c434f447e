import ODRKeys
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
      if let header = headers.first(where: { $0.name.lowercased() == "authorization" }), header.value.hasPrefix("AWS4-HMAC-SHA256 ") {
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

  /// `request` (its forwarded `headers` and `query` parameters) with the
  /// real credential in place and signed again; a reason when the child's
  /// own signature does not check out or cannot be re-signed.
  func resign(_ request: ProxyRequest, _ signature: Signature, headers: [ProxyRequest.Header],
              query: [String]?) -> Result<(headers: [ProxyRequest.Header], query: [String]?, keys: [String]), SigV4Refusal> {
    guard let amzDate = signature.amzDate else { return .failure(SigV4Refusal("its SigV4 signature has no X-Amz-Date")) }
    let contentHash = request.headers.first { $0.name.lowercased() == "x-amz-content-sha256" }.map { ProxyDecision.trimmed($0.value[...]) }
    if let contentHash, contentHash.hasPrefix("STREAMING-AWS4-") {
      return .failure(SigV4Refusal("its body is sent in signed chunks (\(contentHash)), which odr does not re-sign: let the client send an unsigned payload (the AWS SDKs do over https; Java and Go: disable chunked encoding or payload signing)"))
    }
    let s3 = signature.service.hasPrefix("s3")
    guard let payload = contentHash ?? (signature.presigned && s3 ? SigV4Signer.unsignedPayload : request.bodyHash) else {
      return .failure(SigV4Refusal("its SigV4 signature needs the body's hash, which the proxy did not compute"))
    }
    let (path, _) = ProxyDecision.split(request.target)
    // S3 signs the path as sent (encoded once), every other service the
    // path normalized and encoded again; a path signed the other way (a
    // client that encoded an S3 key its own way, a service that does not
    // normalize) is tried too.
    let once = SigV4Signer.canonicalPath(String(decoding: PercentEncoding.decode(path), as: UTF8.self), normalize: false)
    var paths: [String] = []
    for candidate in s3 ? [path.isEmpty ? "/" : path, once] : [SigV4Signer.canonicalPath(path, normalize: true), once] where !paths.contains(candidate) {
      paths.append(candidate)
    }
    // A presigned URL's session token is signed, or (a few services) added after.
    let tokenInQuery = query?.contains { $0.hasPrefix("X-Amz-Security-Token=") } == true
    let unsignedSets = [["X-Amz-Signature"]] + (tokenInQuery ? [["X-Amz-Signature", "X-Amz-Security-Token"]] : [])
    let forms = paths.flatMap { path in unsignedSets.map { (path: path, unsigned: $0) } }
    let verified = forms.first { form in
      Self.canonicalRequest(request.method, path: form.path, query: query, unsigned: form.unsigned, headers: request.headers, signature: signature, payload: payload)
        .map { Self.sign($0, amzDate: amzDate, scope: signature.scope, secret: secret.placeholder.text) == signature.signature } ?? false
    }
    guard let verified else {
      if let missing = signature.signedHeaders.first(where: { name in !request.headers.contains { $0.name.lowercased() == name } }) {
        return .failure(SigV4Refusal("its SigV4 signature names the header \(ProxyDecision.printable(missing)), which the request does not carry"))
      }
      return .failure(SigV4Refusal("its SigV4 signature does not match the request signed with the placeholder secret: odr re-signs only what the command signed (was the request changed after signing, or signed with another secret?)"))
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
    guard let real = Self.canonicalRequest(request.method, path: verified.path, query: query, unsigned: verified.unsigned, headers: headers,
                                           signature: signature, payload: payload) else {
      return .failure(SigV4Refusal("its SigV4 signature names a header the proxy does not forward"))
    }
    let resigned = Self.sign(real, amzDate: amzDate, scope: signature.scope, secret: secret.key.value)
    if signature.presigned {
      if let index = query?.firstIndex(where: { $0.hasPrefix("X-Amz-Signature=") }) { query![index] = "X-Amz-Signature=" + resigned }
    } else if let index = headers.firstIndex(where: { $0.name.lowercased() == "authorization" }) {
      headers[index].value = "AWS4-HMAC-SHA256 Credential=\(accessKeyID.key.value)/\(signature.scope), SignedHeaders=\(signature.signedHeaders.joined(separator: ";")), Signature=\(resigned)"
    }
    return .success((headers, query, keys))
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
