import ODRBase
import Foundation
import ODRExec
import ODRTesting
import Testing

/// The dotenv parser against python-dotenv (its defaults: interpolation on)
/// on the corpus in resources/fixtures, with a byte order mark and both
/// line ends, and on the cases where odr chose to differ.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(1))) struct DotenvFileTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-dotenv-\(UUID().uuidString)")

  init() throws {
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
  }

  /// python-dotenv's values for each of `texts`, its BOM skipped
  /// (utf-8-sig), with its default interpolation against an environment
  /// holding HOME=/home/x: one run of Python for all.
  func pythonDotenv(_ texts: [String]) async throws -> [[String: String]] {
    let paths = try texts.map { text in
      let path = root.appending(path: "\(UUID().uuidString).env")
      try Data(text.utf8).write(to: path)
      return path.path
    }
    let script = "import sys, json, os; os.environ['HOME'] = '/home/x'; from dotenv import dotenv_values; print(json.dumps([dotenv_values(stream=open(p, encoding='utf-8-sig')) for p in sys.argv[1:]]))"
    let result = try await Command.run("/usr/bin/python3", ["-c", script] + paths)
    try #require(result.status == 0, "python-dotenv: \(result.stderr)")
    let values = try JSONDecoder().decode([[String: String]].self, from: Data(result.stdout.utf8))
    try #require(values.count == texts.count)
    return values
  }

  static func values(_ file: DotenvFile) -> [String: String] {
    Dictionary(file.entries.map { entry in
      switch entry.value {
      case .plain(let text): (entry.name, text)
      case .reference(let reference): (entry.name, reference.description)
      }
    }, uniquingKeysWith: { $1 })
  }

  @Test func theCorpusWithAByteOrderMarkReadsAsPythonDotenvReadsIt() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let corpus = try String(contentsOf: Paths.packageRoot.appending(path: "resources/fixtures/dotenv-corpus.env"), encoding: .utf8)
    let texts = ["\n", "\r\n"].map { "\u{FEFF}" + corpus.replacingOccurrences(of: "\n", with: $0) }
    for (text, expected) in zip(texts, try await pythonDotenv(texts)) {
      #expect(expected.count >= 45 && expected["PLAIN"] == "value")
      #expect(Self.values(try DotenvFile(path: "corpus.env", text: text)) == expected)
    }
  }

  @Test func onlyAReferenceShapedValueIsAReference() throws {
    let file = try DotenvFile(path: "r.env", text: """
      W=odr://Weather
      S='odr://com.example.app/Weather'
      DOCS=odr://docs.example.com/a/b
      SPACE=odr://Weather Key
      EMPTY=odr://
      """)
    let kinds = file.entries.map { entry -> String in
      if case .reference(let reference) = entry.value { return "\(entry.name)→\(reference)" }
      return entry.name
    }
    #expect(kinds == ["W→odr://Weather", "S→odr://com.example.app/Weather", "DOCS", "SPACE", "EMPTY"])
  }

  @Test func expansionIsRefusedWherePythonDotenvWouldExpand() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let cases = [
      ("A=${HOME}\n", "e.env:1:3:"),
      ("OK=1\nB=\"x${HOME}y\"\n", "e.env:2:5:"),
      ("C=pre ${MISSING:-fallback} # comment\n", "e.env:1:7:"),
      ("D=\"two\nlines ${HOME}\"\n", "e.env:2:7:"),
      ("E='${HOME}'\n", "e.env:1:4:"),
    ]
    // python-dotenv would indeed give something else than the text as written.
    for ((text, place), python) in zip(cases, try await pythonDotenv(cases.map(\.0))) {
      let error = #expect(throws: ExecError.self) { try DotenvFile(path: "e.env", text: text) }
      #expect(error?.message.hasPrefix(place) == true, "\(error?.message ?? "")")
      #expect(error?.message.contains("write the value out") == true)
      #expect(python.values.allSatisfy { !$0.contains("${") }, "\(text): \(python)")
    }
  }

  @Test func dollarBracesInACommentOrNeverClosedStayLiteral() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let text = "A='${'\nB=plain # see ${HOME}\nC=\"$HOME ${\"\n"
    #expect(Self.values(try DotenvFile(path: "l.env", text: text)) == (try await pythonDotenv([text]))[0])
  }

  @Test(arguments: [
    ("A=\"x\" y\n", "m.env:1:7: expected the end of the line or a # comment after the closing quote"),
    ("A=x\nB = \n C='unclosed\n", "m.env:3:4: this single-quoted value is never closed"),
    ("=x\n", "m.env:1:1: expected a variable name"),
    ("A x\n", "m.env:1:3: expected '=' after A"),
    ("9LIVES=x\n", "m.env:1:1: '9LIVES' is not an environment variable name"),
  ])
  func messagesNameThePlaceAndWhatTheGrammarExpects(text: String, message: String) {
    let error = #expect(throws: ExecError.self) { try DotenvFile(path: "m.env", text: text) }
    #expect(error?.message.hasPrefix(message) == true, "\(error?.message ?? "")")
  }
}
