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
      ?? [specific, "AWS_ENDPOINT_URL"].lazy.compactMap { name in environment[name].flatMap { $0.isEmpty ? nil : (name, $0) } }.first
    guard let (source, text) = named else { return nil }
    guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil,
          url.user == nil, url.password == nil else {
      throw ResourceError(.invalidSource, "The \(service.uppercased()) endpoint '\(text.prefix(200))' (\(source)) is not an http(s) URL without credentials.")
    }
    return url
  }

  /// The URL requests to `service` in `region` go to.
  package static func url(_ service: String, region: String, in environment: [String: String]) throws -> URL {
    if let url = try configured(service, in: environment) { return url }
    let domain = region.hasPrefix("cn-") ? "amazonaws.com.cn" : "amazonaws.com"
    guard let url = URL(string: "https://\(service).\(region).\(domain)/") else {
      throw ResourceError(.invalidSource, "'\(region.prefix(60))' is not an AWS region (AWS_REGION).")
    }
    return url
  }
}
