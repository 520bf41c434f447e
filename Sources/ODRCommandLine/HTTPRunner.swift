package import FoundationEssentials
package import ODRKeyFormat
package import ODRURL

/// `odr http`, the command-line face of ``APIClient``: URLSession, so
/// Foundation networking and libcurl, which `odr` does not link. `odr` hands
/// `odr http` to its helper before parsing (``HTTPHandoff``); the helper
/// passes its runner in its ``CommandContext``.
package protocol HTTPRunner: Sendable {
  /// Runs `odr http`, its body read and its key found, writing to `output`.
  func http(_ options: HTTPOptions, output: Output) async throws
}

/// What `odr http` was asked.
package struct HTTPOptions: Sendable {
  package var method: String
  package var url: String
  package var policy: URLPolicy
  package var attempts: Int
  package var maxTime: Double
  package var include: Bool
  package var headers: [(name: String, value: String)] = []
  package var body: Data?
  package var key: APIKey?
  /// -o: where the body goes (nil: stdout).
  package var output: String?
  package var verbose = false
  package var silent = false
  package var failWithBody = false
  package var userAgent = ""
}
