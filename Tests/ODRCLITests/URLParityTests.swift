import Foundation
import ODRCLITesting
import ODRTesting
import ODRURL
import Testing

/// `odr url check` and `URLPolicy` answer, for every string, what
/// `URL(string:encodingInvalidCharacters:)` answers in a program that imports
/// Foundation (this test process is one: it is the oracle).
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct URLParityTests {
  /// Every component of a URL, each with odd characters put at its start,
  /// middle and end, plus hosts (IPv6, percent forms, non-ASCII) that
  /// parse differently with and without IDNA. No NUL: argv cannot carry it.
  static let corpus: [String] = {
    let parts: [(name: String, value: String)] = [
      ("scheme", "https"), ("user", "user"), ("host", "example.com"), ("port", "8080"),
      ("path", "/v1/items"), ("query", "q=value"), ("fragment", "frag"),
    ]
    let odd = [" ", "\t", "\n", "\r", "\u{7f}", "\u{1}", "%", "%2", "%zz", "%20", "%41", "<", ">", "\"", "{", "}", "|", "\\", "^", "`",
               "é", "日本", "\u{200b}", "[", "]", "@", ":"]
    func assemble(_ values: [String]) -> String {
      "\(values[0])://\(values[1])@\(values[2]):\(values[3])\(values[4])?\(values[5])#\(values[6])"
    }
    var strings: [String] = []
    for index in parts.indices {
      for character in odd {
        let value = parts[index].value
        let middle = value.index(value.startIndex, offsetBy: value.count / 2)
        for placed in [character + value, String(value[..<middle]) + character + value[middle...], value + character] {
          var values = parts.map(\.value)
          values[index] = placed
          strings.append(assemble(values))
        }
      }
    }
    strings += [
      "http://[::1]/", "http://[::1]:8080/a", "http://[::1/", "http://::1/", "http://[fe80::1%25eth0]/", "http://[fe80::1%eth0]/",
      "http://[ ::1]/", "http://[::g]/", "http://[v1.fe]/", "http://ex%41mple.com/", "http://ex%2Emple.com/", "http://bücher.de/",
      "http://xn--bcher-kva.de/", "http://xn--/", "http://ÄÖÜ.example/", "http://a b.com/", "http://a%20b.com/", "http://.com/",
      "http://a..b/", "http://-a.com/", "http://a_b.com/", "http://A.COM/", "http://127.0.0.1/", "http://0x7f.1/", "http://999.1.1.1/",
      "http://example.com:/", "http://example.com:99999/", "http://example.com:-1/", "http://:80/", "http:///path", "http://@host/",
      "http://u:p@host/", "http://u:p:q@host/", "http://u@p@host/", "mailto:a b@example.com", "file:///tmp/a b", "file:///tmp/%",
      "a b", "", "/relative path", "?q=a b", "#frag ment", "//host/path", "https://example.com/\u{FEFF}", "https://example.com/💥",
      "https://💥.example/", "https://example.com/?q=💥#💥", "https://exa\u{0301}mple.com/", "https://example.com/%E2%82", "http://[::1]]/",
    ]
    return strings
  }()

  @Test func theCorpusIsLargeAndDistinct() {
    #expect(Set(Self.corpus).count >= 500)
  }

  /// In-process: URLCheck's parses and URLPolicy's decisions against Foundation's.
  @Test func urlPolicyDecidesWhatFoundationParses() {
    var disagreements: [String] = []
    for string in Self.corpus {
      let strict = URL(string: string, encodingInvalidCharacters: false)?.absoluteString
      let encoded = URL(string: string)?.absoluteString
      let check = URLCheck(string)
      if check.strictURL?.absoluteString != strict || check.encodedURL?.absoluteString != encoded {
        disagreements.append(string)
      }
      let expected: [URLPolicy: String?] = [.strict: strict, .encoding: encoded, .consistent: strict != nil && strict == encoded ? strict : nil]
      for (policy, url) in expected where (try? policy.url(from: string))?.absoluteString != url {
        disagreements.append("\(policy): \(string)")
      }
    }
    #expect(disagreements.isEmpty, "\(disagreements.count) disagreements, first: \(disagreements.prefix(5))")
  }

  /// The command, run as users run it (`odr` hands it to its helper, which
  /// links Foundation): every verdict against the same oracle.
  @Test func odrURLCheckAnswersWhatFoundationParses() async throws {
    struct Report: Decodable {
      let input: String
      let strict: String?
      let encoding: String?
      let verdicts: [String: Verdict]
      struct Verdict: Decodable { let accepted: Bool }
    }
    let result = try await Command.odr(["url", "check", "--json"] + Self.corpus)
    let reports = try JSONDecoder().decode([Report].self, from: Data(result.stdout.utf8))
    try #require(reports.count == Self.corpus.count, "\(result.stderr)")
    var disagreements: [String] = []
    for (string, report) in zip(Self.corpus, reports) {
      let strict = URL(string: string, encodingInvalidCharacters: false)?.absoluteString
      let encoded = URL(string: string)?.absoluteString
      let agrees = report.input == string && report.strict == strict && report.encoding == encoded
        && report.verdicts["strict"]?.accepted == (strict != nil) && report.verdicts["encoding"]?.accepted == (encoded != nil)
        && report.verdicts["consistent"]?.accepted == (strict != nil && strict == encoded)
      if !agrees { disagreements.append(string) }
    }
    #expect(disagreements.isEmpty, "\(disagreements.count) of \(reports.count) disagree with Foundation, first: \(disagreements.prefix(5).map { $0.debugDescription })")
  }
}
