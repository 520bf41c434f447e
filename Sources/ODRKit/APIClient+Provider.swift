public import Logging
public import ODRKeys
public import ODRNetworking

extension APIClient {
  /// A client whose keys come from `provider`.
  public init(baseURL: String? = nil, policy: URLPolicy = .consistent, provider: APIKeyProvider, retry: RetryPolicy = .default,
              timeout: Duration = .seconds(30), maxBodyBytes: Int = APIClient.defaultMaxBodyBytes,
              logger: Logger = Logger(label: "odr.http")) throws(URLPolicyError) {
    try self.init(baseURL: baseURL, policy: policy, keys: { try await provider.apiKey($0) }, retry: retry, timeout: timeout,
                  maxBodyBytes: maxBodyBytes, logger: logger)
  }
}
