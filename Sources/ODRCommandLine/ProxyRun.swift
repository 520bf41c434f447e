import FoundationEssentials
import ODRBase
import ODRCatalog
import ODRCI
import ODRKeys
import ODRProxy
import ODRProxyServer
#if canImport(Glibc)
import Glibc
#endif

/// One `odr exec --proxy` run: the command gets placeholders, the proxy
/// variables and the run's CA bundle; odr stays its parent, serving the
/// proxy, until it ends, then removes what it wrote and exits as it did.
struct ProxyRun {
  var commandLine: [String]
  var keys: [APIKey]
  var bases: [ProxyBase]
  var logPath: String?
  var sandbox: Bool
  var pristine: Bool

  func run(_ context: CommandContext) async throws -> Never {
    let bindings = keys.filter { !($0.metadata.hosts ?? []).isEmpty }.map { ProxyBinding(key: $0) }
    if bindings.isEmpty && !keys.isEmpty {
      let names = keys.map(\.name).sorted().joined(separator: ", ")
      throw CIError(.notFound, """
        No key can go through the proxy: \(names) \(keys.count == 1 ? "names" : "name") no hosts. A key's "hosts" come with its \
        catalog's APIKeys document (`odr set` stores none); run such keys with `odr exec` without --proxy.
        """)
    }
    let hosts = Set(bindings.flatMap { ($0.key.metadata.hosts ?? []).compactMap(ProxyHost.init) })
    let credentials = ProxyCredentials()
    let authority = try RunAuthority(hosts: hosts, now: context.now())
    let trusted = RunAuthority.systemBundle(environment: context.environment)
    let folder = try Self.makeFolder(context)
    defer { dropping(.cleanup) { try FileManager.default.removeItem(atPath: folder) } }
    let bundle = folder + "/ca.pem"
    do {
      try FileIO.atomicWrite(Data(authority.bundle(trusting: trusted).utf8), to: URL(filePath: bundle), mode: 0o600, durable: false)
    } catch {
      throw CIError(.io, "Cannot write the proxy's CA bundle \(bundle): \(error)")
    }
    let log: ProxyAuditLog
    do {
      log = try logPath.map { try ProxyAuditLog(path: context.path($0)) } ?? ProxyAuditLog(descriptor: STDERR_FILENO)
    } catch {
      throw CIError(.io, "\(error)")
    }
    let server: ProxyServer
    do {
      server = try await ProxyServer.start(bindings: bindings, credentials: credentials, bases: bases, authority: authority,
                                           trustRoots: context.environment["SSL_CERT_FILE"], log: log)
    } catch {
      throw CIError(.io, "The proxy could not start on 127.0.0.1: \(error).")
    }
    let base = pristine ? context.environment.filter { CommandRunner.pristineKept.contains($0.key) } : context.environment
    let environment = try ProxyEnvironment(keys: keys, base: base, port: server.port, token: credentials.token, caBundle: bundle,
                                           bindings: bindings, bases: bases)
    if let warning = environment.warning { context.output.error(String(warning.dropFirst("odr: ".count))) }
    if !environment.withheldVariables.isEmpty {
      context.output.error("left \(environment.withheldVariables.joined(separator: ", ")) out of the command's environment: they hold a key's value.")
    }
    let hidden = sandbox ? Self.hidden(context.environment) : nil
    let (commandLine, variables, output) = (commandLine, environment.variables, context.output)
    let searchPath = context.environment["PATH"]
    let bus = Self.busPath(context.environment)
    let outcome = await BlockingThread.run { () -> Result<Int32, CIError> in
      Result {
        try CommandRunner.runGuarded(commandLine, environment: variables, searchPath: searchPath, hiding: hidden) { child in
          server.setChild(child.pid)
          guard let failure = child.sandboxFailure else { return }
          output.error("""
            the command runs without a sandbox (user namespaces: \(failure)): it has no D-Bus address or keyring variables, \
            but a process that knows where the session bus listens\(bus.map { " (\($0))" } ?? "") can still ask the keyring. \
            Pass --no-sandbox to run it so knowingly.
            """)
        }
      }.mapError { $0 as? CIError ?? CIError(.io, "\($0)") }
    }
    let status: Int32
    do {
      status = try outcome.get()
    } catch {
      await server.stop()
      throw error
    }
    await server.stop()
    dropping(.cleanup) { try FileManager.default.removeItem(atPath: folder) }
    CommandRunner.exit(likeStatus: status)
  }

  /// What the sandbox covers: the runtime folder (the session bus, the
  /// keyring's control socket, odr's runtime files), the keyring files, and
  /// the session bus's socket where it lives elsewhere.
  static func hidden(_ environment: [String: String]) -> CommandRunner.Hidden {
    var folders: [String] = []
    if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") { folders.append(runtime) }
    let data = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? environment["HOME"].map { $0 + "/.local/share" }
    if let data { folders.append(data + "/keyrings") }
    let files = busPath(environment).map { [$0] } ?? []
    return CommandRunner.Hidden(folders: folders, files: files)
  }

  /// The session bus's socket path (`unix:path=…`), if it has one.
  static func busPath(_ environment: [String: String]) -> String? {
    guard let address = environment["DBUS_SESSION_BUS_ADDRESS"] else { return nil }
    for entry in address.split(separator: ";") where entry.hasPrefix("unix:") {
      for field in entry.dropFirst(5).split(separator: ",") where field.hasPrefix("path=") {
        return String(field.dropFirst(5))
      }
    }
    return nil
  }

  /// A new 0700 folder for the run's CA bundle, under TMPDIR (not the
  /// runtime folder, which the sandbox hides).
  static func makeFolder(_ context: CommandContext) throws -> String {
    let parent = context.environment["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
    var template = Array((parent + "/odr-proxy-XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else {
      throw CIError(.io, "Cannot make a folder for the proxy's CA bundle in \(parent): \(String(cString: strerror(errno))).")
    }
    return String(cString: made)
  }
}
