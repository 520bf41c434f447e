import ODRBase
import ArgumentParser
import ODRCatalog
import ODRKeyring
import ODRKeys

extension ODR {
  /// `odr doctor`: probes the keyring and says what to fix.
  struct Doctor: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "doctor",
      abstract: "Check the keyring, and show this machine's identities, signing keys, trusted bundles, catalog and keys.",
      discussion: """
        The keyring first: the session bus, the Secret Service, its default collection and lock state (with ODR_STORE=kernel, or "store": "kernel" in odr.json, the kernel keyring). Then the overview: the store keys go to, this machine's identities with their recipients, its signing keys with their public keys, the bundles it trusts (signer, version, where their state lives), the configured catalog with its version and expiry (as last fetched: no network), and how many keys the current service holds. Each part that cannot be read is a note that says what to do.

        Reads and writes no key. Exits 0 when the keyring in use is ready, otherwise with the code of the first problem (5 unavailable, 6 locked, 9 timeout) after saying how to fix it; the overview's notes never change the exit status, so scripts can rely on it.

        With --repair, also puts back the keys of an import into --service (default $ODR_SERVICE) that was cut short (a killed `odr fetch`, a keyring that died): until then every reader sees the keys as they were before it, and the next `odr fetch` would do the same first.

        Example:
          odr doctor
          odr doctor --store kernel --json
          odr doctor --repair --service com.example.demo
        """
    )

    @Option(name: .long, help: ArgumentHelp("Seconds the probe may take.", valueName: "seconds"))
    var timeout: Double = 5

    @Option(name: .long, help: ArgumentHelp("The store to check: secret-service or kernel (default: $ODR_STORE, else odr.json \"store\", else secret-service).", valueName: "store"))
    var store: KeyStoreKind?

    @Flag(help: "Put back the keys of an interrupted import into --service.")
    var repair = false

    @Option(help: ArgumentHelp("The service --repair works on (default: $ODR_SERVICE).", valueName: "bundle-id"))
    var service: String?

    @OptionGroup var reporting: OutputOptions

    func validate() throws {
      if service != nil, !repair { throw ValidationError("--service goes with --repair.") }
    }

    struct Report: Encodable {
      struct Problem: Encodable { let code: String; let message: String }
      @NullWhenAbsent var sessionBusAddress: String?
      let sessionBus: Bool
      let provider: Bool
      @NullWhenAbsent var providerProgram: String?
      @NullWhenAbsent var defaultCollection: String?
      @NullWhenAbsent var locked: Bool?
      let ready: Bool
      @NullWhenAbsent var problem: Problem?
      /// With --repair: how many keys an interrupted import's journal put back.
      @NullWhenAbsent var repaired: Int?
      /// Everything else odr knows on this machine.
      let overview: DoctorOverview
    }

    func run(_ context: CommandContext) async throws {
      let repairing = repair ? service ?? context.variable("ODR_SERVICE") : nil
      if repair, repairing == nil {
        throw ValidationError("--repair needs --service (or ODR_SERVICE): the service whose interrupted import to put back.")
      }
      let probe = await SecretServiceStore.probe(deadline: StoreOptions.deadline(seconds: timeout))
      let address = context.environment["DBUS_SESSION_BUS_ADDRESS"]
      // The keyring in use: the kernel's when the store is configured so.
      var kind = KeyStoreKind.secretService
      var storeNote: [String] = []
      if let store {
        guard store != .memory else { throw ValidationError(StoreOptions.memoryRefusal) }
        kind = store
      } else {
        do { kind = try StoreOptions.configuredKind(context) } catch { storeNote.append("\(error)") }
      }
      var failure = probe.failure
      if kind == .kernel {
        failure = nil
        do { _ = try KernelKeyringStore(service: PrivateKeyring.identityService).names() } catch let error as KeyringError { failure = error }
      }
      var repaired: Int?
      if let service = repairing, failure == nil {
        let store = try StoreOptions.makeStore(kind, service: service, timeout: timeout, context)
        repaired = try await ImportTransaction(store: store).repair()
      }
      failure = failure?.forCommandLine
      let overview = await DoctorOverview.gather(context, kind: kind, keyringUsable: failure == nil, timeout: timeout, notes: storeNote)
      try reporting.print(Report(
          sessionBusAddress: address, sessionBus: probe.sessionBus, provider: probe.provider, providerProgram: probe.providerProgram,
          defaultCollection: probe.defaultCollection, locked: probe.locked, ready: failure == nil,
          problem: failure.map { .init(code: $0.code.rawValue, message: $0.description) }, repaired: repaired, overview: overview),
          failed: failure != nil, on: context.output) {
        var lines: [String] = []
        if kind == .kernel {
          lines.append(line(failure == nil, "kernel keyring", failure == nil ? "answers (keys go here: --store kernel)" : "refused"))
          lines.append("     session bus: not needed by the kernel store (\(probe.sessionBus ? "one answers" : "none answers"))")
        } else {
          lines.append(line(probe.sessionBus, "session bus", Self.busDetail(address: address, reached: probe.sessionBus, runtime: context.environment["XDG_RUNTIME_DIR"])))
          if probe.sessionBus { lines.append(line(probe.provider, "Secret Service", probe.provider ? "org.freedesktop.secrets answered\(probe.providerProgram.map { " (\($0))" } ?? "")" : "no answer")) }
          if probe.provider { lines.append(line(probe.defaultCollection != nil, "default collection", probe.defaultCollection.map { "'\($0)'" } ?? "none")) }
          if let locked = probe.locked { lines.append(line(!locked, "lock state", locked ? "locked" : "unlocked")) }
        }
        lines.append(failure.map { "\n\($0.description)" } ?? "\nThe keyring is ready.")
        if let repaired, let service = repairing {
          lines.append(repaired == 0 ? "No interrupted import of \(service) to repair." : "Put back \(repaired) key\(repaired == 1 ? "" : "s") of an interrupted import of \(service).")
        }
        lines += overview.lines
        context.output.write(lines.joined(separator: "\n") + "\n")
      }
      if let failure { throw ExitCode(ExitStatus.exitCode(for: failure)) }
    }

    /// Where the session bus is: the variable's address, else the one
    /// D-Bus clients fall back to, `$XDG_RUNTIME_DIR/bus`.
    static func busDetail(address: String?, reached: Bool, runtime: String?) -> String {
      if let address { return address }
      guard let runtime, reached else { return "DBUS_SESSION_BUS_ADDRESS is not set\(runtime.map { ", and nothing answers at \($0)/bus" } ?? "")" }
      return "unix:path=\(runtime)/bus (found in $XDG_RUNTIME_DIR; DBUS_SESSION_BUS_ADDRESS is not set)"
    }

    private func line(_ ok: Bool, _ what: String, _ detail: String) -> String {
      "\(ok ? "ok  " : "FAIL") \(what): \(detail)"
    }
  }
}
