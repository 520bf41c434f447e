import ArgumentParser
import ODRBase
import ODRExec
import ODRKeyFormat
import ODRProxy
import ODRProxyServer

extension ODR {
  /// `odr exec [--only A,B] [--pristine] [--no-mask] [--fetch TAG] -- CMD…`
  struct Exec: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "exec",
      abstract: "Run a command with the keys as environment variables (never in argv, never on disk).",
      discussion: """
        A key's variable is its "env" metadata, else its name in upper snake case (Weather -> WEATHER, mapsKey -> MAPS_KEY). Two keys with one variable, invalid names, and variables such as PATH, LD_* or BASH_ENV are refused.

        Masked by default (as `op run`): odr runs the command as a child, replaces every key value in its stdout and stderr (also base64 and percent-encoded forms) with ***, forwards signals sent to odr, and exits as the command did. On a terminal, the command runs in a session of its own on a masked pseudo-terminal like it, which is also its /dev/tty, so colours, progress bars, prompts, pagers and editors work (keys relayed, Ctrl-Z suspends both). With --no-mask, odr replaces itself with the command (execve): its pid, exit code and signals are the command's own and its output is not looked at. Exit 127: command not found; 126: not executable.

        With --env-file (repeatable), the variables are exactly those of the dotenv files (later files win): a value that is an odr:// reference is resolved from the keyring (one search per service; with --fetch, from the pack), others pass as written. Every line of every file is parsed first; errors name file:line:column.

        Example:
          odr exec --service com.example.demo -- ./deploy.sh
          odr exec --env-file .env.example -- make test
          odr exec --only Weather -- sh -c 'curl -fsS "$URL?key=$WEATHER_API_KEY"'
          (single quotes: the variable is expanded by the child shell, not by yours)
          odr exec --fetch APIKeys --catalog https://cdn.example/odr -- make test

        With --watch INTERVAL, odr stays the command's parent and revalidates the keys every INTERVAL: with --fetch, the catalog (a conditional request over http and s3; a folder's catalog.json is read and its bytes compared) and the pack when the tag changed; otherwise the keyring. When the keys the command started with change, odr stops it (SIGTERM, then SIGKILL after --stop-timeout seconds, default 10) and starts it again with the new keys, saying which changed (names only). A revalidation that fails, or an expired catalog, is said once and the command keeps running. When the command exits on its own, odr exits as it did.
          odr exec --fetch APIKeys --watch 5m -- /usr/bin/app

        With --proxy, the command never holds a value: each key's variable is a placeholder shaped like the key (its public prefix such as sk- or xoxb- kept, the rest random in the key's own characters; new each run), HTTPS_PROXY and HTTP_PROXY point at a proxy odr serves for the run, and the CA bundle variables (SSL_CERT_FILE, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, NODE_EXTRA_CA_CERTS, GIT_SSL_CAINFO, …) at what odr trusts plus a CA made for the run that can sign only for the keys' hosts. The proxy puts a key's value in place of its placeholder only where the key's metadata sends it (its header, or its query parameter, or Basic authentication's password, to one of its hosts over https; plain http only to a loopback port its hosts name, such as "localhost:8080"), re-signs what the command signed with an AWS credential's placeholders (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) with the real one, after checking that signature, sends a placeholder anywhere else on as it is (worthless there; noted in the audit log), refuses a request whose Host, SNI and CONNECT disagree (421), and shows a value an API echoes back as its placeholder. Each use, placeholder left as it is and refusal is one JSON line: on stderr, or on a terminal in a file of the run's own under $XDG_STATE_HOME/odr/proxy/ (--proxy-log FILE or - chooses). Keys without "hosts" are left out. --proxy-base NAME=URL gives the command NAME_BASE_URL, a local address the proxy forwards to URL, for SDKs that take a base URL.

        The command runs in a sandbox made by bubblewrap (bwrap) with a seccomp filter: its own user, PID, IPC and network namespaces, no kernel keyring calls, no typing into the terminal; its only network is its own loopback, where the proxy listens. Everything is read-only but its working folder (whose .git stays read-only: --allow-write .git lets it commit, and plant git hooks that run outside the sandbox); /tmp, /run and the runtime folder are private, so no socket of your session is reachable. It gets a home of its own, kept between runs under $XDG_DATA_HOME/odr/homes (one per working folder, or --home NAME), mounted where your home is, with ~/.gitconfig and toolchain folders shown read-only; ~/.ssh, ~/.gnupg, cloud credentials and odr's own files are not there. --allow-read PATH shows more, read-only. --allow-connect HOST:PORT opens one destination outside as plain TCP (a database, a service that is not HTTP): the command reaches it at the same name and port (ports of 1024 and above). odr refuses a working folder that is your home or above it. If the sandbox cannot be made (no bubblewrap, no user namespaces, a container's seccomp profile), the command is not run: exit 11, saying why and what to do; --no-sandbox runs it without the sandbox, knowingly. Not protected: what the key's own API lets anyone holding the placeholder do through this proxy; what the command leaves in its working folder for you to run later; programs that pin certificates; protocols other than HTTP; signed schemes other than AWS's (HMAC, OAuth 1) cannot work (docs/agents.md).
          odr exec --proxy --only OpenAI -- python3 agent.py
        """
    )

    @OptionGroup var source: KeySourceOptions

    @Flag(help: "Start the command with only the keys plus PATH, HOME, USER, LANG and TERM.")
    var pristine = false

    @Flag(inversion: .prefixedNo, help: "Mask key values in the command's stdout and stderr (default); --no-mask execs the command unwatched.")
    var mask = true

    @Option(name: .customLong("env-file"), help: ArgumentHelp("A dotenv file whose odr:// references are resolved; repeatable, later files win.", valueName: "file"), completion: .file())
    var envFiles: [String] = []

    @Flag(help: "Give the command placeholders, not values, and a local proxy that puts each key only where its metadata sends it.")
    var proxy = false

    @Option(name: .customLong("proxy-base"), help: ArgumentHelp("With --proxy: NAME_BASE_URL for the command, forwarded to URL (repeatable).", valueName: "NAME=URL"))
    var proxyBases: [String] = []

    @Option(name: .customLong("proxy-log"), help: ArgumentHelp("With --proxy: append the audit lines to this file (0600); - for stderr (default: stderr, or on a terminal a file of the run's own under $XDG_STATE_HOME/odr/proxy/, named once).", valueName: "file"), completion: .file())
    var proxyLog: String?

    @Flag(name: .customLong("no-sandbox"), help: "With --proxy: run the command without its sandbox, knowingly (it can then read your files, reach your session's D-Bus and keyring, and the network directly).")
    var noSandbox = false

    @Option(help: ArgumentHelp("With --proxy: the name of the home the sandbox keeps between runs (default: one per working folder).", valueName: "name"))
    var home: String?

    @Option(name: .customLong("allow-read"), help: ArgumentHelp("With --proxy: a file or folder the sandbox shows read-only (one of your home's, say); repeatable.", valueName: "path"), completion: .file())
    var allowRead: [String] = []

    @Option(name: .customLong("allow-write"), help: ArgumentHelp("With --proxy: a file or folder the command may write besides its working folder; `.git` lets it commit (and plant hooks that run outside the sandbox); repeatable.", valueName: "path"), completion: .file())
    var allowWrite: [String] = []

    @Option(name: .customLong("allow-connect"), help: ArgumentHelp("With --proxy: a destination outside the sandbox the command may reach as plain TCP (a database, a service that does not speak HTTP), at the same name and port inside; repeatable.", valueName: "host:port"))
    var allowConnect: [String] = []

    /// Tests only: the proxy's idle limit in seconds (default 120).
    @Option(name: .customLong("proxy-idle"), help: .private)
    var proxyIdle: Double?

    @Option(help: ArgumentHelp("Revalidate the keys every INTERVAL (500ms, 30s, 5m) and restart the command when they change.", valueName: "interval"))
    var watch: String?

    @Option(name: .customLong("stop-timeout"), help: ArgumentHelp("With --watch: seconds the command has to end after SIGTERM before SIGKILL.", valueName: "seconds"))
    var stopTimeout: Double = 10

    @Argument(parsing: .postTerminator, help: ArgumentHelp("The command and its arguments, after --.", valueName: "command"))
    var commandLine: [String] = []

    func validate() throws {
      if commandLine.isEmpty { throw ValidationError("Name the command to run after --, for example: odr exec -- ./deploy.sh") }
      if !envFiles.isEmpty && source.onlyNames != nil { throw ValidationError("--only does not apply with --env-file: the files name the variables.") }
      let shaping = home != nil || !allowRead.isEmpty || !allowWrite.isEmpty || !allowConnect.isEmpty
      if !proxy && (!proxyBases.isEmpty || proxyLog != nil || noSandbox || shaping) {
        throw ValidationError("--proxy-base, --proxy-log, --no-sandbox, --home, --allow-read, --allow-write and --allow-connect apply with --proxy only.")
      }
      if noSandbox && shaping {
        throw ValidationError("--home, --allow-read, --allow-write and --allow-connect shape the sandbox: they do not go with --no-sandbox.")
      }
      if proxy && !envFiles.isEmpty { throw ValidationError("--env-file does not apply with --proxy: the keys' variables hold placeholders.") }
      if let watch {
        _ = try DurationText.interval(watch, option: "--watch")
        if proxy || !envFiles.isEmpty || !mask {
          throw ValidationError("--watch keeps odr the command's parent with the keys as variables: it does not go with --proxy, --env-file or --no-mask.")
        }
        guard (0...3600).contains(stopTimeout) else { throw ValidationError("--stop-timeout must be from 0 to 3600 seconds, for example 10.") }
      } else if stopTimeout != 10 {
        throw ValidationError("--stop-timeout applies with --watch only.")
      }
      for base in proxyBases {
        if case .failure(let error) = ProxyBase.parse(base) { throw ValidationError("--proxy-base \(error.message).") }
      }
    }

    func run(_ context: CommandContext) async throws {
      if proxy {
        let all = try await source.keys(context)
        let chosen = Set(try await source.variables(context, keys: all).variables.map(\.key))
        let bases = proxyBases.compactMap { argument in dropping(.isTheAnswer) { try ProxyBase.parse(argument).get() } }  // each parsed in validate()
        var run = ProxyRun(commandLine: commandLine, keys: all.filter { chosen.contains($0.name) }, bases: bases, logPath: proxyLog,
                           sandbox: noSandbox ? nil : ProxyRun.SandboxOptions(homeName: home, readable: allowRead, writable: allowWrite,
                                                                              connects: allowConnect),
                           pristine: pristine, identityFiles: source.identity.identityFiles)
        if let proxyIdle { run.limits.idle = .milliseconds(Int(proxyIdle * 1000)) }
        try await run.run(context)
      }
      if let watch {
        try await WatchRun(commandLine: commandLine, source: source, interval: DurationText.interval(watch, option: "--watch"),
                           stopTimeout: .milliseconds(Int(stopTimeout * 1000)), pristine: pristine).run(context)
      }
      let (variables, secrets) = envFiles.isEmpty ? try await keyVariables(context) : try await fileVariables(context)
      try Self.launch(commandLine, variables: variables, masking: secrets, pristine: pristine, mask: mask, context)
    }

    /// Runs `commandLine` with `variables` in its environment, masking
    /// `secrets` in what it prints, and exits as it did; without `mask`,
    /// replaces this process with it.
    static func launch(_ commandLine: [String], variables: [(name: String, value: String)], masking secrets: [String],
                       pristine: Bool, mask: Bool, _ context: CommandContext) throws -> Never {
      let environment = CommandRunner.environment(with: variables, pristine: pristine, base: context.environment)
      let searchPath = context.environment["PATH"]
      guard mask else { try CommandRunner.replaceProcess(with: commandLine, environment: environment, searchPath: searchPath) }
      let status = try CommandRunner.runMasked(commandLine, environment: environment, searchPath: searchPath, masking: secrets)
      CommandRunner.exit(likeStatus: status)
    }

    /// Every key of the service (or --only), and their values to mask.
    private func keyVariables(_ context: CommandContext) async throws -> ([(name: String, value: String)], [String]) {
      let variables = try await source.variables(context).variables
      return (variables.map { ($0.name, $0.value) }, variables.map(\.value))
    }

    /// The variables of the dotenv files, references resolved in one read
    /// per service; the resolved values are the ones to mask.
    private func fileVariables(_ context: CommandContext) async throws -> ([(name: String, value: String)], [String]) {
      let files = try envFiles.map { try DotenvFile(path: $0, text: try SecretFile.read(context.path($0))) }
      var places: [SecretReference: String] = [:]
      for entry in files.flatMap(\.entries) {
        guard case .reference(let reference) = entry.value else { continue }
        if VariableName.readsForBehaviour(entry.name) {
          throw ExecError(.invalidVariable, "\(entry.place): \(entry.name) is one of the variables programs read to decide what they run, load or trust, so odr does not set it from a key.")
        }
        places[reference] = places[reference] ?? entry.place
      }
      let values = try await source.resolve(Array(places.keys), in: context, place: { places[$0] ?? "" })
      var order: [String] = []
      var merged: [String: String] = [:]
      for entry in files.flatMap(\.entries) {
        if merged[entry.name] == nil { order.append(entry.name) }
        switch entry.value {
        case .plain(let text): merged[entry.name] = text
        case .reference(let reference): merged[entry.name] = values[reference]
        }
      }
      return (order.map { ($0, merged[$0]!) }, Array(Set(values.values)))
    }
  }
}
