import ArgumentParser
import FoundationEssentials
import ODRConfiguration
import ODRKeyring
import ODRKeys
import ODRURL
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

extension ODR {
  /// `odr http [METHOD] URL [-X METHOD] [--key NAME] [-H K:V] [-d @file|-] [-o FILE] [-i] [-s] [-v]`
  struct HTTP: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "http",
      abstract: "Send one HTTP request with a key attached as its metadata says: a small curl for CI smoke tests.",
      discussion: """
        The options that curl also has mean what they mean in curl: -X, -H, -d (@FILE or - only: a body never goes in argv), -o, -i, -s, -v, --fail-with-body. The URL is checked under --policy (consistent by default). The key (--key) is attached as its "header" (with "scheme") or "query" metadata says, and only if the URL's host is one of its "hosts"; a redirect to another host goes without it. Authorization, Cookie and Proxy-Authorization given with -H go only to the URL's origin (scheme, host, port): a redirect to another origin drops them, as curl does. Over plain http:// a key goes only to a loopback host, or when its metadata says "insecure": true; otherwise odr refuses before sending (exit 2). Idempotent methods are retried on connection failures, 502/503/504 and 429 with Retry-After. Prints the body (with -i, the status line and headers first); on a non-2xx status it prints nothing unless --fail-with-body. Logs only with -v, one line each on stderr. Exit 7: connection failed or a non-2xx status; 9: timeout; 3: no such key; 2: the URL or the key's route was refused.

        Example:
          odr http https://api.weather.example/v1/forecast?city=Oslo --key Weather
          odr http POST https://api.example.com/items -d @item.json -o reply.json
          odr http GET https://api.example.com/health -o health.json -s
        """
    )

    init() {}

    @Argument(help: ArgumentHelp("[METHOD] URL: the method (GET, POST, …; default GET, or -X) and the URL.", valueName: "method-and-url"))
    var words: [String] = []

    @Option(name: [.customShort("X"), .customLong("request")], help: ArgumentHelp("The method (default GET).", valueName: "method"))
    var request: String?

    @Option(name: [.customShort("o"), .customLong("output")], help: ArgumentHelp("Write the body to FILE instead of standard output; it streams to a temporary file that replaces FILE once complete (bodies of any size, never held in memory).", valueName: "file"), completion: .file())
    var output: String?

    @Flag(name: [.customShort("s"), .customLong("silent")], help: "Print no warnings; only errors.")
    var silent = false

    @Flag(name: [.customShort("v"), .customLong("verbose")], help: "Log each request, response and retry on stderr, one line each.")
    var verbose = false

    @Flag(name: .customLong("fail-with-body"), help: "On a non-2xx status, still print the body (and exit 7).")
    var failWithBody = false

    /// The method and URL, from `[METHOD] URL` and -X.
    /// The methods a first word alone is taken for (then the URL is missing).
    static let methods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    var methodAndURL: (method: String, url: String) {
      get throws {
        switch words.count {
        case 1 where Self.methods.contains(words[0].uppercased()) && !words[0].contains(":"):
          throw ValidationError("No URL: `odr http \(words[0].prefix(20)) URL` (\(words[0].prefix(20)) is the method; the URL comes after it).")
        case 1: return ((request ?? "GET").uppercased(), words[0])
        case 2 where request == nil: return (words[0].uppercased(), words[1])
        case 2: throw ValidationError("Give the method once: `odr http -X \(request!) URL` or `odr http \(words[0]) URL`.")
        default: throw ValidationError("Give the URL (and, before it, the method if not GET): odr http [METHOD] URL.")
        }
      }
    }

    @Option(help: ArgumentHelp("The key to attach (from the keyring of --service, $ODR_SERVICE, or the catalog's bundle).", valueName: "name"))
    var key: String?

    @Option(name: [.customShort("H"), .customLong("header")], help: ArgumentHelp("A header to send, NAME:VALUE (repeatable).", valueName: "name:value"))
    var headers: [String] = []

    @Option(name: [.customShort("d"), .customLong("data")], help: ArgumentHelp("The body: @FILE, or - for stdin.", valueName: "@file|-"))
    var data: String?

    @Flag(name: [.customShort("i"), .customLong("include")], help: "Print the status line and headers before the body.")
    var include = false

    @Option(help: "How the URL string is parsed (see odr url check).")
    var policy: URLPolicy = .consistent

    @Option(help: ArgumentHelp("Attempts in all for idempotent requests (1: no retry).", valueName: "n"))
    var attempts: Int = 3

    @Option(name: .customLong("max-time"), help: ArgumentHelp("Seconds one attempt may take.", valueName: "seconds"))
    var maxTime: Double = 30

    @OptionGroup var keyring: StoreOptions

    @OptionGroup var catalog: CatalogOptions

    func validate() throws {
      let (method, _) = try methodAndURL
      guard method.allSatisfy({ $0.isASCII && $0.isUppercase }), !method.isEmpty else {
        throw ValidationError("'\(method.prefix(20))' is not an HTTP method (GET, POST, PUT, DELETE, …).")
      }
      if verbose && silent { throw ValidationError("-v and -s contradict each other; pick one.") }
      guard (1...10).contains(attempts) else { throw ValidationError("--attempts must be between 1 and 10.") }
      guard maxTime > 0 && maxTime <= 3600 else { throw ValidationError("--max-time must be between 0 and 3600 seconds.") }
      for header in headers where !header.contains(":") {
        throw ValidationError("--header takes NAME:VALUE, for example --header Accept:application/json.")
      }
      if let data, data != "-", !data.hasPrefix("@") {
        throw ValidationError("--data takes @FILE or - (stdin); a body is never given in argv.")
      }
    }

    func run(_ context: CommandContext) async throws {
      let runner = try context.httpRunner()
      let (method, url) = try methodAndURL
      var options = HTTPOptions(method: method, url: url, policy: policy, attempts: attempts, maxTime: maxTime, include: include)
      options.output = output.map(context.path)
      options.verbose = verbose
      options.silent = silent
      options.failWithBody = failWithBody
      options.userAgent = "odr/\(ODR.configuration.version)"
      for header in headers {
        let name = header.prefix { $0 != ":" }
        options.headers.append((String(name), String(header.dropFirst(name.count + 1).drop { $0 == " " })))
      }
      if let data { options.body = try Self.readBody(data, context) }
      if let key { options.key = try await keyring.makeStore(bundleOf: catalog, context, purpose: " for --key").key(named: key) }
      try await runner.http(options, output: context.output)
    }

    /// The body from `@FILE`, or stdin for `-`.
    private static func readBody(_ source: String, _ context: CommandContext) throws -> Data {
      if source == "-" { return Data(try StandardInput.readAll(context.input, what: "the body")) }
      let path = String(source.dropFirst())
      do { return try Data(contentsOf: context.url(path)) } catch {
        throw CommandFailure("Cannot read the body from '\(path)'.", code: 3)
      }
    }
  }
}
