package import FoundationEssentials
import ODRBase
import ODRCatalog

/// Where an AWS service is reached: `AWS_ENDPOINT_URL_<SERVICE>`, else
/// `AWS_ENDPOINT_URL` (as the AWS SDKs and CLI read them, for
/// S3-compatible stores, LocalStack, moto), else AWS's own regional
/// endpoint.
package enum AWSEndpoint {
  /// The endpoint configured for `service` (`s3`, `kms`, `sts`): `override`
  /// (odr.json's S3 `"endpoint"`), else the variables; nil for AWS's own.
  package static func configured(_ service: String, in environment: [String: String], override: String? = nil) throws -> URL? {
    let specific = "AWS_ENDPOINT_URL_" + service.uppercased()
    let named: (String, String)? = override.map { ("\"endpoint\" in odr.json", $0) }
      ?? [specific, "AWS_ENDPOINT_URL"].lazy.compactMap { name in environment.nonEmpty(name).map { (name, $0) } }.first
    guard let (source, text) = named else { return nil }
    guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil,
          url.user == nil, url.password == nil else {
      throw ResourceError(.invalidSource, "The \(service.uppercased()) endpoint '\(text.prefix(200))' (\(source)) is not an http(s) URL without credentials.")
    }
    return url
  }

  /// The URL requests to `service` in `region` go to: requests that carry
  /// a token, credentials or a file key (STS, KMS), so a configured
  /// endpoint must be https, or http on this machine's loopback (moto,
  /// LocalStack); `region` must be a region's name, not a host's.
  package static func url(_ service: String, region: String, in environment: [String: String]) throws -> URL {
    guard KMSKeyARN.isRegion(region) else {
      throw ResourceError(.invalidSource, "'\(region.prefix(60))' is not an AWS region (AWS_REGION, AWS_DEFAULT_REGION, the action's aws-region): lower-case words and a number, such as eu-west-1.")
    }
    if let url = try configured(service, in: environment) {
      guard url.scheme == "https" || Origin.isLoopback(url.host(percentEncoded: false) ?? "") else {
        throw ResourceError(.invalidSource, "The \(service.uppercased()) endpoint \(url.absoluteString.prefix(200)) is plain http to another machine; odr sends \(service.uppercased()) requests (a web identity token, signed credentials, a file key) over https only, or http to 127.0.0.1 for a local emulator. Use https, or set AWS_ENDPOINT_URL_\(service.uppercased()).")
      }
      return url
    }
    let domain = region.hasPrefix("cn-") ? "amazonaws.com.cn" : "amazonaws.com"
    return URL(string: "https://\(service).\(region).\(domain)/")!
  }
}
