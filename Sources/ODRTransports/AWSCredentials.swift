import FoundationEssentials
import ODRBase

/// AWS credentials, found the way the AWS tools find them: the standard
/// variables, else a profile of the shared credentials file.
public struct AWSCredentials: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
  public let accessKeyID: String
  public let secretAccessKey: String
  public let sessionToken: String?
  /// Where they came from, for messages (never the values).
  public let source: String

  public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, source: String) {
    self.accessKeyID = accessKeyID
    self.secretAccessKey = secretAccessKey
    self.sessionToken = sessionToken
    self.source = source
  }

  /// Names the credentials by source and access key prefix, never their secrets.
  public var description: String { "AWSCredentials(\(source), access key \(accessKeyID.prefix(4))…, secret: <redacted>)" }
  public var debugDescription: String { description }
  public var customMirror: Mirror { Mirror(self, children: ["source": source, "secretAccessKey": "<redacted>"]) }

  /// `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`),
  /// else the profile `AWS_PROFILE` (default `default`) of
  /// `AWS_SHARED_CREDENTIALS_FILE` (default `~/.aws/credentials`); nil
  /// when there are none (requests then go unsigned).
  public static func find(in environment: [String: String]) -> AWSCredentials? {
    fromVariables(environment) ?? fromProfile(environment)
  }

  /// `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`).
  package static func fromVariables(_ environment: [String: String]) -> AWSCredentials? {
    guard let id = environment.nonEmpty("AWS_ACCESS_KEY_ID"), let secret = environment.nonEmpty("AWS_SECRET_ACCESS_KEY") else { return nil }
    return AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: environment.nonEmpty("AWS_SESSION_TOKEN"),
                          source: environment.nonEmpty("AWS_SESSION_TOKEN") == nil ? "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN")
  }

  /// The profile `AWS_PROFILE` (default `default`) of
  /// `AWS_SHARED_CREDENTIALS_FILE` (default `~/.aws/credentials`).
  package static func fromProfile(_ environment: [String: String]) -> AWSCredentials? {
    let profile = environment.nonEmpty("AWS_PROFILE") ?? "default"
    let path = environment.nonEmpty("AWS_SHARED_CREDENTIALS_FILE") ?? (environment.nonEmpty("HOME") ?? "") + "/.aws/credentials"
    // no readable credentials file: no profile, and the caller says what to set
    guard let text = dropping(.isTheAnswer, { try String(contentsOfFile: path, encoding: .utf8) }),
          let section = iniSection(profile, in: text),
          let id = section["aws_access_key_id"], let secret = section["aws_secret_access_key"] else { return nil }
    return AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: section["aws_session_token"],
                          source: "profile '\(profile)' of \(path)")
  }

  /// The region: `AWS_REGION`, else `AWS_DEFAULT_REGION`, else us-east-1.
  public static func region(in environment: [String: String]) -> String {
    for name in ["AWS_REGION", "AWS_DEFAULT_REGION"] {
      if let value = environment[name], !value.isEmpty { return value }
    }
    return "us-east-1"
  }

  /// The `key = value` lines of `[name]` in an INI file.
  package static func iniSection(_ name: String, in text: String) -> [String: String]? {
    var current: String?
    var found: [String: String]?
    for raw in text.split(whereSeparator: \.isNewline) {
      let line = trim(raw)
      if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
      if line.hasPrefix("[") && line.hasSuffix("]") {
        current = trim(line.dropFirst().dropLast())
        if current == name && found == nil { found = [:] }
        continue
      }
      guard current == name, let equals = line.firstIndex(of: "=") else { continue }
      found?[trim(line[..<equals]).lowercased()] = trim(line[line.index(after: equals)...])
    }
    return found
  }

  private static func trim(_ text: Substring) -> String {
    String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed())
  }
}
