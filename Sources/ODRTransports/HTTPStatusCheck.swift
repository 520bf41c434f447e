package import FoundationEssentials
import ODRBase
package import ODRCatalog

/// What a non-2xx HTTP status means for a download, in plain words: the
/// one table both HTTP transports (odr's own and URLSession's) use.
package enum HTTPStatusCheck {
  /// Whose words a failure is said in: a client's, installing packs;
  /// `odr publish`'s, writing to a host; or an API call's (STS, KMS,
  /// GitHub's OIDC token).
  package enum Purpose: Sendable {
    case reading, publishing, calling

    /// What the failure left, and what to do next.
    package func consequence(_ advice: String) -> String {
      switch self {
      case .reading: "nothing was installed. \(advice)"
      case .calling: "nothing was changed. \(advice)"
      case .publishing: "odr publish stopped (catalog.json goes last, so clients still read a whole catalog). \(advice), then run it again: what is uploaded is skipped"
      }
    }
  }

  /// The error for `code`, given the start of the response body. The S3
  /// `<Code>` of the body is quoted only when it is a plain identifier that
  /// none of `secrets` contains or is contained in: a gateway that echoes
  /// the request's credential there gets it dropped.
  package static func failure(_ code: Int, excerpt: String, url: URL, credential: String, secrets: [String],
                              purpose: Purpose = .reading) -> ResourceError {
    // S3 says why in an XML body: <Error><Code>AccessDenied</Code>…
    let parts = excerpt.split(separator: "<Code>", maxSplits: 1)
    let s3Code = (parts.count == 2 ? parts[1].split(separator: "<", maxSplits: 1).first.map(String.init) : nil).flatMap { code in
      code.count <= 60 && code.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
        && !secrets.contains { $0.contains(code) || code.contains($0) } ? code : nil
    }
    let status = "HTTP \(code)\(s3Code.map { " (\($0))" } ?? "")"
    switch code {
    case 404 where s3Code == "NoSuchBucket":
      return ResourceError(.notFound, "\(url.redacted) answered \(status): the bucket does not exist. Check the bucket's name, the endpoint (AWS_ENDPOINT_URL) and the region, or create the bucket first.")
    case 404 where purpose == .publishing:
      return ResourceError(.notFound, "\(url.redacted) answered \(status): the server has no such bucket or path. Check the s3:// URL and the endpoint (AWS_ENDPOINT_URL).")
    case 404 where url.deletingLastPathComponent().lastPathComponent != "blobs":
      return ResourceError(.notFound, "\(url.redacted) answered \(status): nothing is published there. Check the --catalog URL: it names the folder that holds catalog.json.")
    case 404:
      // A blob the catalog lists: the publisher is mid-upload or uploaded
      // in the wrong order. Transient: a network failure (exit 7).
      return ResourceError(.network, "\(url.redacted) answered \(status): the catalog lists a blob the server does not have; nothing was installed. Try again later; the publisher must upload blobs before catalog.json (odr publish does).")
    case 401, 403:
      let allowed = purpose == .reading ? "what it may read" : "what it may write (s3:PutObject; with --prune also s3:ListBucket and s3:DeleteObject)"
      return ResourceError(.accessDenied, "\(url.redacted) answered \(status) to a request made with \(credential). Check that credential and \(allowed).")
    case 400..<500 where s3Code.map(s3CredentialCodes.contains) == true:
      return ResourceError(.accessDenied, "\(url.redacted) answered \(status) to a request made with \(credential). Check that credential (an expired or wrong session token?).")
    case 400..<500:
      return ResourceError(.invalidSource, "\(url.redacted) answered \(status): the server refused the request. Check the URL and the source's settings.")
    default:
      return ResourceError(.network, "\(url.redacted) answered \(status); \(purpose.consequence(purpose == .reading ? "The server is failing: try again later" : "The server is failing: wait a while")).")
    }
  }

  /// Every secret a request may carry (the "auth" header's value, AWS's
  /// secret key and session token): never quoted back from a response.
  package static func secrets(credential: HTTPCredential?, s3: S3Access?) -> [String] {
    [credential?.value, s3?.credentials?.secretAccessKey, s3?.credentials?.sessionToken, s3?.credentials?.accessKeyID].compactMap { $0 }.filter { !$0.isEmpty }
  }

  /// The credential a request to `url` carried, for messages.
  package static func credentialName(for url: URL, credential: HTTPCredential?, s3: S3Access?) -> String {
    if url.scheme == "s3" { return s3?.credentialName ?? "no AWS credentials" }
    if let credential, credential.applies(to: url) { return credential.name }
    return "no credential (add \"auth\" to odr.json for a protected catalog)"
  }

  /// S3 error codes that mean the credentials were refused.
  package static let s3CredentialCodes: Set<String> = [
    "AccessDenied", "SignatureDoesNotMatch", "InvalidAccessKeyId", "InvalidToken", "ExpiredToken", "TokenRefreshRequired", "InvalidSecurity",
  ]
}
