package import FoundationEssentials
import ODRBase
import ODRURL

/// STS's `AssumeRoleWithWebIdentity`: an OIDC token (a CI job's, a
/// Kubernetes service account's) exchanged for a role's temporary
/// credentials. AWS serves it unsigned: the token is the proof.
package enum STSWebIdentity {
  /// The most of an STS answer odr reads.
  package static let answerLimit = 64 << 10

  /// The request for `role`'s credentials with `token`.
  package static func request(role: String, token: String, sessionName: String, endpoint: URL) -> HTTPExchangeRequest {
    let form = [
      ("Action", "AssumeRoleWithWebIdentity"), ("Version", "2011-06-15"), ("RoleArn", role),
      ("RoleSessionName", sessionName), ("WebIdentityToken", token), ("DurationSeconds", "900"),
    ].map { "\($0.0)=\(PercentEncoding.encode($0.1))" }.joined(separator: "&")
    return HTTPExchangeRequest(method: "POST", url: endpoint,
                               headers: [("Content-Type", "application/x-www-form-urlencoded; charset=utf-8"), ("Accept", "application/xml")],
                               body: Data(form.utf8))
  }

  /// The credentials in STS's answer, or the error it says, in words that
  /// name `role` and what to check.
  /// An answer that quotes the token (`hiding`) is not quoted.
  package static func credentials(from response: HTTPExchangeResponse, role: String, tokenSource: String,
                                  hiding secrets: [String] = []) throws -> (AWSCredentials, expires: Date?) {
    let text = String(decoding: response.body.prefix(answerLimit), as: UTF8.self)
    guard (200..<300).contains(response.status) else {
      let code = XMLText.element("Code", in: text).map { AWSMessage.identifier($0, hiding: secrets) } ?? "HTTP \(response.status)"
      let said = XMLText.element("Message", in: text).map { ": \(AWSMessage.clean($0, hiding: secrets))" } ?? ""
      switch code {
      case "AccessDenied", "InvalidIdentityToken", "IDPRejectedClaim", "ExpiredTokenException", "IDPCommunicationError":
        throw AWSError(.roleRefused, "STS refused to let this job assume the role \(role) with its web identity token (from \(tokenSource)): \(code)\(said). Check the role's trust policy (its OIDC provider, the audience sts.amazonaws.com, the repository and branch conditions: docs/ci.md, \"No stored secret\"), that the role exists, and that the token is this job's and not expired.")
      default:
        throw AWSError(.service, "STS answered \(code)\(said) to AssumeRoleWithWebIdentity for \(role); nothing was fetched. Try again; if it persists, check AWS_REGION and AWS_ENDPOINT_URL_STS.")
      }
    }
    guard let id = XMLText.element("AccessKeyId", in: text), let secret = XMLText.element("SecretAccessKey", in: text),
          let token = XMLText.element("SessionToken", in: text), !id.isEmpty, !secret.isEmpty, !token.isEmpty else {
      throw AWSError(.service, "STS's answer to AssumeRoleWithWebIdentity for \(role) holds no credentials odr can read; nothing was fetched. Check AWS_ENDPOINT_URL_STS (is it STS?).")
    }
    // an expiry odr cannot read: kept for this process only (the chain asks again in the next)
    let expires = XMLText.element("Expiration", in: text).flatMap { text in dropping(.isTheAnswer) { try Date(text, strategy: .iso8601) } }
    return (AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: token, source: "the role \(role), assumed with the web identity token from \(tokenSource)"), expires)
  }
}
