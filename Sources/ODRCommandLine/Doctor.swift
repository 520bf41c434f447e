import ArgumentParser
import ODRCatalog
import ODRKeyring
import ODRKeys

extension ODR {
  /// `odr doctor`: probes the keyring and says what to fix.
  struct Doctor: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "doctor",
      abstract: "Check the session bus, the Secret Service, its default collection and lock state.",
      discussion: """
        Reads and writes no key. Exits 0 when the keyring is ready, otherwise with the code of the first problem (5 unavailable, 6 locked, 9 timeout) after saying how to fix it.

        With --repair, also puts back the keys of an import into --service (default $ODR_SERVICE) that was cut short (a killed `odr fetch`, a keyring that died): until then every reader sees the keys as they were before it, and the next `odr fetch` would do the same first.

        Example:
          odr doctor
          scripts/with-keyring odr doctor --json
          odr doctor --repair --service com.example.demo
        """
    )

    @Option(name: .long, help: ArgumentHelp("Seconds the probe may take.", valueName: "seconds"))
    var timeout: Double = 5

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
    }

    func run(_ context: CommandContext) async throws {
      let repairing = repair ? service ?? context.variable("ODR_SERVICE") : nil
      if repair, repairing == nil {
        throw ValidationError("--repair needs --service (or ODR_SERVICE): the service whose interrupted import to put back.")
      }
      let probe = await SecretServiceStore.probe(deadline: StoreOptions.deadline(seconds: timeout))
      let address = context.environment["DBUS_SESSION_BUS_ADDRESS"]
      var repaired: Int?
      if let service = repairing, probe.failure == nil {
        let store = try context.keyring(service, StoreOptions.deadline(seconds: timeout))
        repaired = try await ImportTransaction(store: store).repair()
      }
      try reporting.print(Report(
          sessionBusAddress: address, sessionBus: probe.sessionBus, provider: probe.provider, providerProgram: probe.providerProgram,
          defaultCollection: probe.defaultCollection, locked: probe.locked, ready: probe.isReady,
          problem: probe.failure.map { .init(code: $0.code.rawValue, message: $0.description) }, repaired: repaired), failed: probe.failure != nil, on: context.output) {
        var lines: [String] = []
        lines.append(line(probe.sessionBus, "session bus", address ?? "DBUS_SESSION_BUS_ADDRESS is not set"))
        if probe.sessionBus { lines.append(line(probe.provider, "Secret Service", probe.provider ? "org.freedesktop.secrets answered\(probe.providerProgram.map { " (\($0))" } ?? "")" : "no answer")) }
        if probe.provider { lines.append(line(probe.defaultCollection != nil, "default collection", probe.defaultCollection.map { "'\($0)'" } ?? "none")) }
        if let locked = probe.locked { lines.append(line(!locked, "lock state", locked ? "locked" : "unlocked")) }
        lines.append(probe.failure.map { "\n\($0.description)" } ?? "\nThe keyring is ready.")
        if let repaired, let service = repairing {
          lines.append(repaired == 0 ? "No interrupted import of \(service) to repair." : "Put back \(repaired) key\(repaired == 1 ? "" : "s") of an interrupted import of \(service).")
        }
        context.output.write(lines.joined(separator: "\n") + "\n")
      }
      if let failure = probe.failure { throw ExitCode(ExitStatus.exitCode(for: failure)) }
    }

    private func line(_ ok: Bool, _ what: String, _ detail: String) -> String {
      "\(ok ? "ok  " : "FAIL") \(what): \(detail)"
    }
  }
}
