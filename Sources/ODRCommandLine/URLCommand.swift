import ArgumentParser

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
    struct Check: AsyncParsableCommand {
      static let configuration = CommandConfiguration(
        abstract: "Parse URL strings strictly and with encoding, and say what each policy decides and why.",
        discussion: """
          strict: URL(string:encodingInvalidCharacters: false), reject what does not parse. encoding: URL(string:), which percent-encodes invalid characters; report the result. consistent (default): reject a string the two modes disagree on. Exits 1 when any string is rejected under --policy. "-" reads one string per line from stdin.

          Example:
            odr url check 'https://api.example.com/v1/search?q=a b'
            printf '%s\\n' "$URL1" "$URL2" | odr url check --policy strict --json -
          """
      )

      init() {}

      @Option(help: "strict, encoding or consistent: the policy that decides the exit code.")
      var policy: String = "consistent"

      @Flag(help: "Print the results as JSON.")
      var json = false

      @Argument(help: "The strings to check; - reads them from stdin, one per line.")
      var strings: [String] = []

      func validate() throws {
        guard ["strict", "encoding", "consistent"].contains(policy) else {
          throw ValidationError("--policy must be strict, encoding or consistent.")
        }
        if strings.isEmpty { throw ValidationError("Give at least one string, or - to read them from stdin.") }
      }

      func run() async throws {
        guard let network = ODR.network else { NetworkHandoff.exec() }
        var strings = strings
        if strings == ["-"] {
          strings = []
          while let line = readLine(strippingNewline: true) { strings.append(line) }
        }
        try await network.checkURLs(URLCheckOptions(strings: strings, policy: policy, json: json))
      }
    }
  }
}
