import Foundation
import ODRCommandLine
import ODRHTTP
import ODRKeyring
import ODRKeys
import ODRNetworking
import ODRResources

/// The commands only `odr-net` can run.
struct NetCommands: NetworkCommands {
  func transport(for source: NetworkSource) throws -> any BlobTransport {
    let timeouts = HTTPTransport.Timeouts(stall: .milliseconds(Int(source.stall * 1000)))
    let credential = source.credential.map {
      HTTPCredential(header: $0.header, value: $0.value, origin: source.url, name: $0.name)
    }
    let s3 = source.url.scheme == "s3" ? try S3Access.fromEnvironment(ProcessInfo.processInfo.environment, endpoint: source.endpoint) : nil
    return HTTPTransport(timeouts: timeouts, credential: credential, s3: s3)
  }

  func publishDestination(for source: NetworkSource) throws -> any PublishDestination {
    S3Destination(source.url, access: try S3Access.fromEnvironment(ProcessInfo.processInfo.environment, endpoint: source.endpoint),
                  timeouts: HTTPTransport.Timeouts(stall: .milliseconds(Int(source.stall * 1000))))
  }

  func checkURLs(_ options: URLCheckOptions) async throws {
    let policy = URLPolicy(rawValue: options.policy) ?? .consistent
    let checks = options.strings.map(URLCheck.init)
    if options.json {
      try Output.json(checks.map(Report.init))
    } else {
      for check in checks {
        var text = "\(URLCheck.shown(check.input))\n"
        text += "  strict:   \(check.strictURL.map { URLCheck.shown($0.absoluteString) } ?? "nil")\n"
        text += "  encoding: \(check.encodedURL.map { URLCheck.shown($0.absoluteString) } ?? "nil")\n"
        for each in URLPolicy.allCases {
          let verdict = check.verdict(under: each)
          let mark = each == policy ? "*" : " "
          text += " \(mark)\(each.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0)) \(verdict.accepted ? "accept" : "reject")  \(verdict.reason)\n"
        }
        Output.write(text)
      }
    }
    let rejected = checks.filter { !$0.verdict(under: policy).accepted }.count
    if rejected > 0 {
      throw CommandFailure("\(rejected) of \(checks.count) string\(checks.count == 1 ? "" : "s") rejected under the \(policy.rawValue) policy.", code: 1)
    }
  }

  func http(_ options: HTTPOptions) async throws {
    let key = options.key
    let lookup: APIClient.KeyLookup? = key.map { key in { @Sendable _ in key } }
    let client = try APIClient(policy: URLPolicy(rawValue: options.policy) ?? .consistent, keys: lookup,
                               retry: RetryPolicy(maxAttempts: options.attempts), timeout: .milliseconds(Int(options.maxTime * 1000)))
    let headers = Dictionary(options.headers.map { ($0.name, $0.value) }) { _, last in last }
    let request = APIRequest<Data>.data(method: options.method, path: options.url, headers: headers, body: options.body, key: key?.name)
    do {
      let response = try await client.send(request)
      if options.include {
        let lines = ["HTTP \(response.status)"] + response.headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        Output.write(lines.joined(separator: "\r\n") + "\r\n\r\n")
      }
      Output.write(bytes: response.value)
    } catch let error as APIError {
      let code: Int32 = switch error.code {
      case .invalidURL, .keyUnusable: 2
      case .timeout: 9
      default: 7
      }
      throw CommandFailure(error.message, code: code)
    } catch let error as URLPolicyError {
      throw CommandFailure(error.description, code: 2)
    }
  }
}

/// One string's check, as `--json` prints it.
private struct Report: Encodable {
  let input: String
  @NullWhenAbsent var strict: String?
  @NullWhenAbsent var encoding: String?
  let problems: [URLCheck.Problem]
  let verdicts: [String: URLCheck.Verdict]

  init(_ check: URLCheck) {
    input = check.input
    strict = check.strictURL?.absoluteString
    encoding = check.encodedURL?.absoluteString
    problems = check.problems
    verdicts = Dictionary(uniqueKeysWithValues: URLPolicy.allCases.map { ($0.rawValue, check.verdict(under: $0)) })
  }
}
