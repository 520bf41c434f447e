import Foundation
@testable import ODRNetworking
@testable import ODRURL
import Testing
import ODRTesting

/// The URL corpus: each string with the verdict of strict, encoding and
/// consistent. The verdicts pin Swift 6.3's Foundation on Linux, which
/// behaves like iOS 17: a toolchain that parses differently fails here.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(1))) struct URLPolicyTests {
  /// (string, strict accepts, encoding accepts, consistent accepts)
  static let corpus: [(String, Bool, Bool, Bool)] = [
    // Valid as they stand: every policy accepts.
    ("https://example.com/", true, true, true),
    ("https://example.com/a%20b", true, true, true),
    ("https://[::1]:8080/x", true, true, true),
    ("http://[2001:db8::1]/", true, true, true),
    ("http://[fe80::1%25eth0]/", true, true, true),
    ("https://user:p%40ss@example.com/", true, true, true),
    ("https://example.com/?q=a+b&c=d", true, true, true),
    ("https://example.com/?a=%20&b=+", true, true, true),
    ("https://example.com/?a=1&&b=2", true, true, true),
    ("http://", true, true, true),
    ("https://example.com:99999/", true, true, true),
    ("mailto:a@b.c", true, true, true),
    ("urn:isbn:0451450523", true, true, true),
    ("//example.com/x", true, true, true),
    ("/relative/path", true, true, true),
    ("https://xn--bcher-kva.example/", true, true, true),
    ("https://ex%41mple.com/", true, true, true),
    ("https://example.com/a%2Fb", true, true, true),
    ("HTTPS://EXAMPLE.COM/", true, true, true),
    ("https://example.com/path;params?x=1#frag", true, true, true),
    ("https://example.com/~user/file.txt", true, true, true),
    ("https://example.com/a/../b", true, true, true),
    ("https://example.com/?q=%E2%9C%93", true, true, true),
    ("https://example.com/%F0%9F%98%80", true, true, true),
    ("ftp://ftp.example.com/pub/file", true, true, true),
    ("https://example.com/#", true, true, true),
    ("https://example.com/?", true, true, true),
    ("http://192.168.0.1/", true, true, true),
    ("file:///etc/hosts", true, true, true),
    ("https://example.com/a,b;c=d!$'()*", true, true, true),
    ("https://example.com/" + String(repeating: "a", count: 8000), true, true, true),
    // Invalid as they stand: encoding repairs them, so the modes disagree.
    ("a b", false, true, false),
    ("relative path", false, true, false),
    ("https://example.com/a b", false, true, false),
    ("https://example.com/?q=a b", false, true, false),
    ("https://example.com/a b#c d", false, true, false),
    ("https://example.com/ ", false, true, false),
    ("https://example.com/\t", false, true, false),
    ("https://example.com/a\nb", false, true, false),
    ("https://example.com/a\rb", false, true, false),
    ("https://example.com/a\0b", false, true, false),
    ("https://example.com/a\u{7f}b", false, true, false),
    ("https://example.com/a\u{200B}b", false, true, false),
    ("https://example.com/%zz", false, true, false),
    ("https://example.com/%", false, true, false),
    ("https://example.com/a%2", false, true, false),
    ("https://example.com/?%", false, true, false),
    ("https://example.com/?q=100%", false, true, false),
    ("https://example.com/#%zz", false, true, false),
    ("https://example.com/a#b#c", false, true, false),
    ("https://user:pa ss@example.com/", false, true, false),
    ("http://user@host@example.com/", false, true, false),
    ("https://bücher.example/", false, true, false),
    ("https://example.com/bücher", false, true, false),
    ("https://example.com/😀?q=é", false, true, false),
    ("https://example.com/[x]", false, true, false),
    ("https://example.com/a|b", false, true, false),
    ("https://example.com/a\"b", false, true, false),
    ("https://example.com/a<b>", false, true, false),
    ("https://example.com/a^b", false, true, false),
    ("https://example.com/a`b", false, true, false),
    ("https://example.com/a{b}", false, true, false),
    ("https://example.com/a\\b", false, true, false),
    ("https://example.com/" + String(repeating: "a b", count: 3000), false, true, false),
    // Not URLs in either mode.
    ("", false, false, false),
    (" https://example.com/", false, false, false),
    ("https://[::1", false, false, false),
    ("http://[::1]x/", false, false, false),
    ("https://exa mple.com/", false, false, false),
    ("https://example.com:abc/", false, false, false),
    ("https://example.com:8080:90/", false, false, false),
  ]

  @Test func theCorpusIsLargeEnough() {
    #expect(Self.corpus.count >= 60)
  }

  @Test(arguments: corpus)
  func verdicts(string: String, strict: Bool, encoding: Bool, consistent: Bool) throws {
    let check = URLCheck(string)
    #expect(check.verdict(under: .strict).accepted == strict)
    #expect(check.verdict(under: .encoding).accepted == encoding)
    #expect(check.verdict(under: .consistent).accepted == consistent)
    // A refusal always says why; an encoding-only string names its problem characters.
    if strict != encoding { #expect(!check.problems.isEmpty, "no problem found in \(string.debugDescription)") }
    for policy in URLPolicy.allCases where !check.verdict(under: policy).accepted {
      #expect(throws: URLPolicyError.self) { try policy.url(from: string) }
    }
  }

  @Test func swift63OnLinuxBehavesLikeIOS17() {
    #expect(URL(string: "a b")?.absoluteString == "a%20b")
    #expect(URL(string: "a b", encodingInvalidCharacters: false) == nil)
    #expect(URL(string: "https://example.com/%zz")?.absoluteString == "https://example.com/%25zz")
    #expect(URL(string: "https://example.com/a#b#c")?.absoluteString == "https://example.com/a#b%23c")
  }

  @Test func problemsNameTheCharacterAndTheComponent() {
    let cases: [(String, String, String)] = [
      ("https://example.com/a b", "space (U+0020)", "path"),
      ("https://example.com/?q=a b", "space (U+0020)", "query"),
      ("https://example.com/#a b", "space (U+0020)", "fragment"),
      ("https://us er@example.com/", "space (U+0020)", "user info"),
      ("https://bücher.example/", "non-ASCII 'ü' (U+00FC)", "host"),
      ("https://example.com/%zz", "'%' not followed by two hex digits", "path"),
      ("https://example.com/a#b#c", "a second '#'", "fragment"),
      ("https://example.com/\t", "tab (U+0009)", "path"),
      ("https://example.com/[x]", "'[' outside an IPv6 host", "path"),
      ("http://user@host@example.com/", "'@' inside the user info", "user info"),
    ]
    for (string, what, component) in cases {
      let problem = URLCheck(string).problems.first
      #expect(problem?.what == what, "\(string.debugDescription)")
      #expect(problem?.component == component, "\(string.debugDescription)")
    }
  }

  @Test func encodingReportsTheNormalisedForm() {
    let verdict = URLCheck("https://example.com/a b").verdict(under: .encoding)
    #expect(verdict.url == "https://example.com/a%20b")
    #expect(verdict.reason.contains("normalised to 'https://example.com/a%20b'"))
    #expect(URLCheck("https://example.com/").verdict(under: .encoding).reason == "parses as it is")
  }
}
