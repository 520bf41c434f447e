import FoundationEssentials
import ODRBase
import ODRCatalog
import ODRExec
import ODRKeyFormat
import ODRProxy
import ODRProxyServer
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// One `odr exec --proxy` run: the command gets placeholders, the proxy
/// variables and the run's CA bundle, and runs in a sandbox made by
/// bubblewrap (``SandboxPlan``) whose only way out is the proxy; odr stays
/// its parent, serving the proxy, until it ends, then exits as it did. If
/// the sandbox cannot be made, the command does not run (exit 11), unless
/// the user asked for none (`--no-sandbox`).
struct ProxyRun {
  /// What the sandbox shows besides the defaults (the options of the same names).
  struct SandboxOptions {
    var homeName: String?
    var readable: [String] = []
    var writable: [String] = []
    /// `--allow-connect HOST:PORT`: relayed as plain TCP.
    var connects: [String] = []
  }

  var commandLine: [String]
  var keys: [APIKey]
  var bases: [ProxyBase]
  var logPath: String?
  /// nil: `--no-sandbox`.
  var sandbox: SandboxOptions?
  var pristine: Bool
  /// The identity files odr was given (covered in the sandbox).
  var identityFiles: [String] = []
  var limits = ProxyServer.Limits()

  func run(_ context: CommandContext) async throws -> Never {
    let bindings = keys.filter { !($0.metadata.hosts ?? []).isEmpty }.map { ProxyBinding(key: $0) }
    if bindings.isEmpty && !keys.isEmpty {
      let names = keys.map(\.name).sorted().joined(separator: ", ")
      throw ExecError(.notFound, """
        No key can go through the proxy: \(names) \(keys.count == 1 ? "names" : "name") no hosts. A key's "hosts" come with its \
        catalog's APIKeys document (`odr set` stores none); run such keys with `odr exec` without --proxy.
        """)
    }
    let credentials = ProxyCredentials()
    let authority = try RunAuthority(hosts: Set(bindings.flatMap(\.hosts)), now: context.now())
    let caBundle = authority.bundle(trusting: RunAuthority.systemBundle(environment: context.environment))
    let log = try auditLog(context)
    defer { log.flush() }
    let base = pristine ? context.environment.filter { CommandRunner.pristineKept.contains($0.key) } : context.environment
    let server = Server(bindings: bindings, credentials: credentials, bases: bases, authority: authority,
                        trustRoots: context.environment["SSL_CERT_FILE"], log: log, limits: limits)
    let status: Int32
    if let sandbox {
      status = try await runSandboxed(sandbox, context, base: base, bindings: bindings, credentials: credentials, caBundle: caBundle, server: server)
    } else {
      status = try await runUnsandboxed(context, base: base, bindings: bindings, credentials: credentials, caBundle: caBundle, server: server)
    }
    log.flush()
    CommandRunner.exit(likeStatus: status)
  }

  /// The command in its sandbox, the proxy on the socket the sandbox hands
  /// over (inside the sandbox's network namespace: nothing outside reaches it).
  private func runSandboxed(_ options: SandboxOptions, _ context: CommandContext, base: [String: String], bindings: [ProxyBinding],
                            credentials: ProxyCredentials, caBundle: String, server: Server) async throws -> Int32 {
    guard let bwrap = Self.bubblewrap(searchPath: context.environment["PATH"]) else { throw ExecError(.noSandbox, SandboxAdvice.missingBubblewrap) }
    var request = SandboxPlan.Request(workingFolder: context.workingDirectory.path, environment: context.environment, helper: CommandLineTool.executablePath)
    request.homeName = options.homeName
    request.readable = options.readable
    request.writable = options.writable
    request.connects = options.connects
    request.identityFiles = identityFiles.map(context.path)
    request.standardInputIsTerminal = isatty(context.input.rawValue) == 1
    // The sandbox's loopback is its own: any port is free there but those
    // the relays listen on.
    let relayed = Set(try request.connects.enumerated().map { try SandboxPlan.relay($1, index: $0).port })
    let port = (20_000...59_999).lazy.map { _ in Int.random(in: 20_000...59_999) }.first { !relayed.contains($0) }!
    request.listeners = ["127.0.0.1:\(port)"]
    let plan = try SandboxPlan.make(request)
    if !plan.removedLinks.isEmpty {
      context.output.error("removed symbolic links a command had left in the sandbox's home where odr mounts folders: \(plan.removedLinks.joined(separator: ", ")).")
    }
    // no /etc/hosts: the relayed names alone
    let hosts = plan.hostsFile ? Array(plan.hosts(appendingTo: dropping(.isTheAnswer) { try String(contentsOfFile: "/etc/hosts", encoding: .utf8) } ?? "").utf8) : nil
    let environment = try ProxyEnvironment(keys: keys, base: plan.variables(over: base), port: port, token: credentials.token,
                                           caBundle: SandboxPlan.caBundlePath, bindings: bindings, bases: bases)
    say(environment, context)
    let (commandLine, variables, searchPath) = (commandLine, environment.variables, context.environment["PATH"])
    let (started, starting) = AsyncStream.makeStream(of: CommandRunner.SandboxedChild.self)
    let outcome = Task {
      await BlockingThread.run { () -> Result<Int32, ExecError> in
        defer { starting.finish() }
        return Result {
          try CommandRunner.runSandboxed(commandLine, plan: plan, environment: variables, bwrap: bwrap, caBundle: Array(caBundle.utf8), hosts: hosts,
                                         searchPath: searchPath) { starting.yield($0) }
        }.mapError { $0 as? ExecError ?? ExecError(.io, "\($0)") }
      }
    }
    var proxy: ProxyServer?
    var relays: [TCPRelay] = []
    for await child in started {
      do {
        proxy = try await server.start(.socket(child.listeners[0]), child: child.pid)
        for (relay, socket) in zip(plan.relays, child.listeners.dropFirst()) {
          relays.append(try await TCPRelay.start(listening: socket, to: relay.host, port: relay.port))
        }
      } catch {
        kill(child.pid, SIGKILL)
        _ = await outcome.value
        throw ExecError(.io, "The proxy could not start: \(error).")
      }
    }
    let status = await outcome.value
    await proxy?.stop()
    for relay in relays { await relay.stop() }
    return try status.get()
  }

  /// The command as odr's child, the proxy on 127.0.0.1 (`--no-sandbox`).
  private func runUnsandboxed(_ context: CommandContext, base: [String: String], bindings: [ProxyBinding], credentials: ProxyCredentials,
                              caBundle: String, server: Server) async throws -> Int32 {
    let folder = try Self.makeFolder(context)
    defer { dropping(.cleanup) { try FileManager.default.removeItem(atPath: folder) } }
    let bundle = folder + "/ca.pem"
    do {
      try FileIO.atomicWrite(Data(caBundle.utf8), to: URL(filePath: bundle), mode: 0o600, durable: false)
    } catch {
      throw ExecError(.io, "Cannot write the proxy's CA bundle \(bundle): \(error)")
    }
    let proxy = try await server.start(.loopback, child: nil)
    let environment = try ProxyEnvironment(keys: keys, base: base, port: proxy.port, token: credentials.token, caBundle: bundle,
                                           bindings: bindings, bases: bases)
    say(environment, context)
    context.output.error("""
      the command runs without a sandbox (--no-sandbox): it can read your files, reach your session's D-Bus (and the keyring on it), \
      other processes and the network directly, and other local users can reach the proxy's port (the run's token keeps them out).
      """)
    let (commandLine, variables, searchPath) = (commandLine, environment.variables, context.environment["PATH"])
    let outcome = await BlockingThread.run { () -> Result<Int32, ExecError> in
      Result {
        try CommandRunner.runGuarded(commandLine, environment: variables, searchPath: searchPath) { proxy.setChild($0) }
      }.mapError { $0 as? ExecError ?? ExecError(.io, "\($0)") }
    }
    await proxy.stop()
    return try outcome.get()
  }

  /// Where the audit lines go: `--proxy-log FILE`; stderr with
  /// `--proxy-log -`, or when stderr is not a terminal (a CI log); else a
  /// file of the run's own under `$XDG_STATE_HOME/odr/proxy/` (0600), named
  /// once: JSON lines would scribble over the command's terminal.
  private func auditLog(_ context: CommandContext) throws -> ProxyAuditLog {
    do {
      if logPath == "-" || (logPath == nil && isatty(STDERR_FILENO) != 1) { return ProxyAuditLog(descriptor: STDERR_FILENO) }
      if let logPath { return try ProxyAuditLog(path: context.path(logPath)) }
      let folder = context.folders.stateHome.appending(path: "odr/proxy")
      try PrivateFolder.make(folder)
      let stamp = String(ProxyAuditRecord.iso8601(context.now()).filter { $0 != ":" })
      let path = folder.appending(path: "\(stamp)-\(getpid()).jsonl").path
      let log = try ProxyAuditLog(path: path)
      context.output.error("the proxy's audit lines go to \(path)")
      return log
    } catch {
      throw ExecError(.io, "\(error)")
    }
  }

  /// The lines odr says before the command starts: keys left out, variables withheld.
  private func say(_ environment: ProxyEnvironment, _ context: CommandContext) {
    if let warning = environment.warning { context.output.error(String(warning.dropFirst("odr: ".count))) }
    if !environment.withheldVariables.isEmpty {
      context.output.error("left \(environment.withheldVariables.joined(separator: ", ")) out of the command's environment: they hold a key's value.")
    }
  }

  /// What starts the run's proxy, once its listener is known.
  struct Server {
    let bindings: [ProxyBinding]
    let credentials: ProxyCredentials
    let bases: [ProxyBase]
    let authority: RunAuthority
    let trustRoots: String?
    let log: ProxyAuditLog
    let limits: ProxyServer.Limits

    func start(_ listener: ProxyServer.Listener, child: Int32?) async throws -> ProxyServer {
      let server: ProxyServer
      do {
        server = try await ProxyServer.start(listener, bindings: bindings, credentials: credentials, bases: bases, authority: authority,
                                             trustRoots: trustRoots, log: log, limits: limits)
      } catch {
        throw ExecError(.io, "The proxy could not start: \(error).")
      }
      if let child { server.setChild(child) }
      return server
    }
  }

  /// bubblewrap's executable: the first `bwrap` on PATH, else /usr/bin's.
  static func bubblewrap(searchPath: String?) -> String? {
    let folders = (searchPath ?? "").split(separator: ":").map(String.init) + ["/usr/bin"]
    return folders.lazy.map { $0 + "/bwrap" }.first { access($0, X_OK) == 0 }
  }

  /// A new 0700 folder for the run's CA bundle, under TMPDIR (`--no-sandbox` only).
  static func makeFolder(_ context: CommandContext) throws -> String {
    let parent = context.environment["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
    var template = Array((parent + "/odr-proxy-XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else {
      throw ExecError(.io, "Cannot make a folder for the proxy's CA bundle in \(parent): \(String(cString: strerror(errno))).")
    }
    return String(cString: made)
  }
}
