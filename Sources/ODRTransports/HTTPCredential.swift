public import FoundationEssentials
import ODRBase

/// A header that authenticates requests to one origin (docs/hosting.md's
/// `"auth"`): for example `Authorization: Bearer …` read from the keyring.
/// It is sent only to `origin` (scheme, host, port) and never follows a
/// redirect elsewhere; it is never logged, printed or put in argv.
public struct HTTPCredential: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
  /// The header's name (`Authorization`, `X-Api-Key`, …).
  public let header: String
  /// The header's value (the secret).
  package let value: String
  /// The only origin it goes to.
  public let origin: URL
  /// What it is, for messages: by name, never by value.
  public let name: String

  public init(header: String, value: String, origin: URL, name: String) {
    self.header = header
    self.value = value
    self.origin = origin
    self.name = name
  }

  /// Names the credential and its origin, never its value.
  public var description: String { "HTTPCredential(\(header) for \(origin.redacted), \(name), value: <redacted>)" }
  public var debugDescription: String { description }
  public var customMirror: Mirror { Mirror(self, children: ["header": header, "origin": origin, "name": name, "value": "<redacted>"]) }

  /// True when `url` is at this credential's origin.
  package func applies(to url: URL) -> Bool {
    Origin(url).map { $0 == Origin(origin) } ?? false
  }
}
