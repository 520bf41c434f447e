import ArgumentParser
import FoundationEssentials
import ODRKeyring
import ODRKeys
#if canImport(Glibc)
import Glibc
#endif

extension ODR {
  /// `odr http METHOD URL [--key NAME] [--header K:V] [--data @file|-]`
  struct HTTP: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "http",
      abstract: "Send one HTTP request with a key attached as its metadata says: a small curl for CI smoke tests.",
      discussion: """
        The URL is checked under --policy (consistent by default). The key (--key) is attached as its "header" (with "scheme") or "query" metadata says, and only if the URL's host is one of its "hosts"; a redirect to another host goes without it. Idempotent methods are retried on connection failures, 502/503/504 and 429 with Retry-After. Prints the body (with --include, the status line and headers first). Exit 7: connection failed or a non-2xx status; 9: timeout; 3: no such key; 2: the URL was refused.

        Example:
          odr http GET https://api.weather.example/v1/forecast?city=Oslo --key Weather
          odr http POST https://api.example.com/items --header Content-Type:application/json --data @item.json
        """
    )

    init() {}

    @Argument(help: "GET, POST, PUT, DELETE, …")
    var method: String

    @Argument(help: "The URL.")
    var url: String

    @Option(help: ArgumentHelp("The key to attach (from the keyring of --service).", valueName: "name"))
    var key: String?

    @Option(name: .customLong("header"), help: ArgumentHelp("A header to send, NAME:VALUE (repeatable).", valueName: "name:value"))
    var headers: [String] = []

    @Option(help: ArgumentHelp("The body: @FILE, or - for stdin.", valueName: "@file|-"))
    var data: String?

    @Flag(help: "Print the status line and headers before the body.")
    var include = false

    @Option(help: "strict, encoding or consistent.")
    var policy: String = "consistent"

    @Option(help: ArgumentHelp("Attempts in all for idempotent requests (1: no retry).", valueName: "n"))
    var attempts: Int = 3

    @Option(name: .customLong("max-time"), help: ArgumentHelp("Seconds one attempt may take.", valueName: "seconds"))
    var maxTime: Double = 30

    @OptionGroup var keyring: StoreOptions

    func validate() throws {
      guard ["strict", "encoding", "consistent"].contains(policy) else {
        throw ValidationError("--policy must be strict, encoding or consistent.")
      }
      guard (1...10).contains(attempts) else { throw ValidationError("--attempts must be between 1 and 10.") }
      guard maxTime > 0 && maxTime <= 3600 else { throw ValidationError("--max-time must be between 0 and 3600 seconds.") }
      for header in headers where !header.contains(":") {
        throw ValidationError("--header takes NAME:VALUE, for example --header Accept:application/json.")
      }
      if let data, data != "-", !data.hasPrefix("@") {
        throw ValidationError("--data takes @FILE or - (stdin); a body is never given in argv.")
      }
    }

    func run() async throws {
      guard let network = ODR.network else { NetworkHandoff.exec() }
      var options = HTTPOptions(method: method, url: url, policy: policy, attempts: attempts, maxTime: maxTime, include: include)
      for header in headers {
        let name = header.prefix { $0 != ":" }
        options.headers.append((String(name), String(header.dropFirst(name.count + 1).drop { $0 == " " })))
      }
      if let data { options.body = try Self.readBody(data) }
      if let key {
        let keys = try await keyring.makeStore().keys()
        guard let found = keys.first(where: { $0.name == key }) else {
          throw KeyringError(.notFound, "No key '\(key)' in the keyring for this service (keys: \(keys.map(\.name).joined(separator: ", "))). Run `odr fetch` first, or check --service.")
        }
        options.key = found
      }
      try await network.http(options)
    }

    /// The body from `@FILE`, or stdin for `-`.
    private static func readBody(_ source: String) throws -> Data {
      if source == "-" {
        var body = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
          let n = Glibc.read(STDIN_FILENO, &buffer, buffer.count)
          if n < 0 && errno == EINTR { continue }
          if n <= 0 { return body }
          body.append(contentsOf: buffer[0..<n])
        }
      }
      let path = String(source.dropFirst())
      do { return try Data(contentsOf: URL(filePath: path)) } catch {
        throw CommandFailure("Cannot read the body from '\(path)'.", code: 3)
      }
    }
  }
}
