import ArgumentParser
import ODRKeyring
import ODRResources
#if canImport(Glibc)
import Glibc
#endif

extension ODR {
  /// `odr doctor`: probes the keyring and says what to fix.
  struct Doctor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "doctor",
      abstract: "Check the session bus, the Secret Service, its default collection and lock state.",
      discussion: """
        Reads and writes no key. Exits 0 when the keyring is ready, otherwise with the code of the first problem (5 unavailable, 6 locked, 9 timeout) after saying how to fix it.

        Example:
          odr doctor
          scripts/with-keyring odr doctor --json
        """
    )

    @Option(name: .long, help: ArgumentHelp("Seconds the probe may take.", valueName: "seconds"))
    var timeout: Double = 5

    @OptionGroup var reporting: OutputOptions

    struct Report: Encodable {
      struct Problem: Encodable { let code: String; let message: String }
      @NullWhenAbsent var sessionBusAddress: String?
      let sessionBus: Bool
      let provider: Bool
      @NullWhenAbsent var defaultCollection: String?
      @NullWhenAbsent var locked: Bool?
      let ready: Bool
      @NullWhenAbsent var problem: Problem?
    }

    func run() async throws {
      let probe = await SecretServiceStore.probe(deadline: StoreOptions.deadline(seconds: timeout))
      let address = getenv("DBUS_SESSION_BUS_ADDRESS").map { String(cString: $0) }
      try reporting.print(Report(
          sessionBusAddress: address, sessionBus: probe.sessionBus, provider: probe.provider,
          defaultCollection: probe.defaultCollection, locked: probe.locked, ready: probe.isReady,
          problem: probe.failure.map { .init(code: $0.code.rawValue, message: $0.description) }), failed: probe.failure != nil) {
        var lines: [String] = []
        lines.append(line(probe.sessionBus, "session bus", address ?? "DBUS_SESSION_BUS_ADDRESS is not set"))
        if probe.sessionBus { lines.append(line(probe.provider, "Secret Service", probe.provider ? "org.freedesktop.secrets answered" : "no answer")) }
        if probe.provider { lines.append(line(probe.defaultCollection != nil, "default collection", probe.defaultCollection.map { "'\($0)'" } ?? "none")) }
        if let locked = probe.locked { lines.append(line(!locked, "lock state", locked ? "locked" : "unlocked")) }
        lines.append(probe.failure.map { "\n\($0.description)" } ?? "\nThe keyring is ready.")
        Output.write(lines.joined(separator: "\n") + "\n")
      }
      if let failure = probe.failure { throw ExitCode(ExitStatus.exitCode(for: failure)) }
    }

    private func line(_ ok: Bool, _ what: String, _ detail: String) -> String {
      "\(ok ? "ok  " : "FAIL") \(what): \(detail)"
    }
  }
}
