public import FoundationEssentials
public import ODRBase

/// How URL strings become URLs (docs/hosting.md and docs/design.md, seed 004).
///
/// Since iOS 17 — and Swift 6.3 on Linux — `URL(string:)` percent-encodes
/// characters that are not valid in a URL (`"a b"` → `a%20b`) where it used
/// to return nil; `URL(string:encodingInvalidCharacters: false)` keeps the
/// old, strict behaviour. A string the two parse differently is ambiguous:
/// what the author meant and what goes on the wire may differ.
public enum URLPolicy: String, Sendable, CaseIterable, Codable {
  /// Strict parsing only: reject what does not parse as it is.
  case strict
  /// Encoding parsing: accept, and report the normalised string when it
  /// differs from the input.
  case encoding
  /// Reject a string the two modes disagree on (the default).
  ///
  /// It accepts exactly the strings ``strict`` accepts: a string that parses
  /// strictly has no invalid character for encoding to change, so the two
  /// modes always agree on it (the corpus in URLPolicyTests pins this). The
  /// two differ in what they say about a refused string: `consistent` shows
  /// what encoding would have made of it, which is the ambiguity to fix.
  case consistent

  /// The URL `string` denotes under this policy, or a ``URLPolicyError``
  /// that says which characters or components were the problem.
  public func url(from string: String) throws(URLPolicyError) -> URL {
    // A string that parses strictly has no invalid character for encoding
    // mode to encode, so both modes give the same URL (the corpus in
    // URLPolicyTests pins this): every policy accepts it, with one parse.
    if let url = URL(string: string, encodingInvalidCharacters: false) { return url }
    let check = URLCheck(string)
    let verdict = check.verdict(under: self)
    guard verdict.accepted, let url = self == .encoding ? check.encodedURL : check.strictURL else {
      throw URLPolicyError(input: string, policy: self, reason: verdict.reason)
    }
    return url
  }
}

/// A URL string refused by a ``URLPolicy``.
public struct URLPolicyError: Error, Sendable, CustomStringConvertible {
  /// The refused string.
  public let input: String
  /// The policy that refused it.
  public let policy: URLPolicy
  /// Which characters or components were the problem.
  public let reason: String

  public var description: String {
    "The URL \(URLCheck.shown(input)) is refused under the \(policy.rawValue) policy: \(reason)"
  }
}

extension URLPolicyError: ODRError {
  public var domain: String { "url" }
  public var kind: String { "refused-url" }
  public var message: String { description }
  public var isTransient: Bool { false }
}
