import ArgumentParser
import FoundationEssentials
import ODRCatalog
import ODRURL

extension ODR {
  /// `odr url check STRING…`
  struct URLCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "url",
      abstract: "Check URL strings under odr's URL policies.",
      discussion: """
        Example:
          odr url check 'https://api.example.com/v1/search?q=a b'
        """,
      subcommands: [Check.self]
    )

    init() {}

    /// `odr url check [--policy strict|encoding|consistent] [--json] STRING…|-`
    struct Check: ContextualCommand {
      static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Parse URL strings strictly and with encoding, and say what each policy decides and why.",
        discussion: """
          strict: URL(string:encodingInvalidCharacters: false), reject what does not parse. encoding: URL(string:), which percent-encodes invalid characters; report the result. consistent (default): reject a string the two modes disagree on. Exits 1 when any string is rejected under --policy. "-" reads one string per line from stdin.

          Example:
            odr url check 'https://api.example.com/v1/search?q=a b'
            printf '%s\\n' "$URL1" "$URL2" | odr url check --policy strict --json -
          """
      )

      init() {}

      @Option(help: "The policy that decides the exit code.")
      var policy: URLPolicy = .consistent

      @OptionGroup var reporting: OutputOptions

      @Argument(help: "The strings to check; - reads them from stdin, one per line.")
      var strings: [String] = []

      func validate() throws {
        if strings.isEmpty { throw ValidationError("Give at least one string, or - to read them from stdin.") }
      }

      func run(_ context: CommandContext) async throws {
        var strings = strings
        if strings == ["-"] {
          let limit = 16 << 20
          let bytes = try StandardInput.readAll(context.input, limit: limit, what: "the strings")
          guard bytes.count <= limit else { throw CommandFailure("The strings on standard input are over 16 MiB; nothing was checked. Check them in parts.", code: 2) }
          var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
          if lines.last?.isEmpty == true { lines.removeLast() }
          strings = lines.map { String(decoding: $0.last == UInt8(ascii: "\r") ? $0.dropLast() : $0, as: UTF8.self) }
        }
        let checks = strings.map(URLCheck.init)
        let rejected = checks.filter { !$0.verdict(under: policy).accepted }.count
        try reporting.print(checks.map(Report.init), failed: rejected > 0, on: context.output) {
          for check in checks {
            var text = "\(URLCheck.shown(check.input))\n"
            text += "  strict:   \(check.strictURL.map { URLCheck.shown($0.absoluteString) } ?? "(does not parse)")\n"
            text += "  encoding: \(check.encodedURL.map { URLCheck.shown($0.absoluteString) } ?? "(does not parse)")\n"
            for each in URLPolicy.allCases {
              let verdict = check.verdict(under: each)
              let mark = each == policy ? "*" : " "
              text += " \(mark)\(each.rawValue + String(repeating: " ", count: max(0, 11 - each.rawValue.count))) \(verdict.accepted ? "accept" : "reject")  \(verdict.reason)\n"
            }
            context.output.write(text)
          }
        }
        if rejected > 0 {
          throw CommandFailure("\(rejected) of \(checks.count) string\(checks.count == 1 ? "" : "s") rejected under the \(policy.rawValue) policy.", code: 1)
        }
      }

      /// One string's check, as `--json` prints it.
      struct Report: Encodable {
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
    }
  }
}
