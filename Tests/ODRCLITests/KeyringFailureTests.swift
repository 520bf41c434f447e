import Foundation
import ODRCLITesting
import ODRTesting
import Testing

/// Each keyring failure gets its own exit code and a message that names
/// it, fast. These tests break their own private keyring session.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct KeyringFailureTests {
  let service = "com.odr.failure"

  func odr(_ arguments: [String], in session: KeyringSession, input: String? = nil) async throws -> Command.Result {
    try await Command.odr(arguments + ["--service", service], input: input, environment: session.environment)
  }

  func environment(bus: String?) -> [String: String] {
    var env = ProcessInfo.processInfo.environment
    env["DBUS_SESSION_BUS_ADDRESS"] = bus
    return env
  }

  @Test func lockedCollectionExitsSixAndSaysLocked() async throws {
    let session = try await KeyringSession.start()
    #expect(try await odr(["set", "Weather"], in: session, input: "v").status == 0)
    try await session.lock()
    for arguments in [["get", "Weather"], ["get", "Absent"], ["list"], ["delete", "Weather"]] {
      let result = try await odr(arguments, in: session, input: "v")
      #expect(result.status == 6, "\(arguments)")
      #expect(result.stderr.contains("locked"), "\(arguments)")
      #expect(!result.stderr.contains("No key"), "\(arguments)")
    }
    let set = try await odr(["set", "Other"], in: session, input: "v")
    #expect(set.status == 6)
  }

  /// Only the collections that would answer count: the default one and
  /// those holding matching items. Another locked collection does not.
  @Test func anUnrelatedLockedCollectionDoesNotLockOdrOut() async throws {
    let session = try await KeyringSession.start()
    defer { session.end() }
    #expect(try await odr(["set", "Old"], in: session, input: "in-login").status == 0)
    try await session.makeSessionCollectionTheDefault()
    try await session.lock()  // the login collection, no longer the default
    let missing = try await odr(["get", "Missing"], in: session)
    #expect(missing.status == 3, "\(missing.stderr)")
    #expect(try await odr(["set", "New"], in: session, input: "in-session").status == 0)
    #expect(try await odr(["get", "New"], in: session).stdout == "in-session")
    // A key whose item is in the locked collection is still reported locked.
    let old = try await odr(["get", "Old"], in: session)
    #expect(old.status == 6)
    #expect(old.stderr.contains("'Login' is locked"))
    #expect(!old.stderr.contains("--replace"))
    #expect(try await odr(["list"], in: session).status == 6)
    let other = try await Command.odr(["list", "--service", service + ".other"], environment: session.environment)
    #expect(other.status == 0, "\(other.stderr)")
  }

  @Test func missingDefaultCollectionExitsFiveAndSaysSo() async throws {
    let session = try await KeyringSession.start()
    try await session.deleteDefaultCollection()
    let set = try await odr(["set", "Weather"], in: session, input: "v")
    #expect(set.status == 5)
    #expect(set.stderr.contains("no default collection"))
    let doctor = try await Command.odr(["doctor"], environment: session.environment)
    #expect(doctor.status == 5)
    #expect(doctor.stdout.contains("FAIL default collection"))
  }

  @Test(arguments: ["unix:path=/nonexistent/bus", nil])
  func noSessionBusExitsFiveFast(bus: String?) async throws {
    let result = try await Command.odr(["get", "Weather", "--service", service], environment: environment(bus: bus), exclusive: true)
    #expect(result.status == 5)
    #expect(result.stderr.contains("No D-Bus session bus"))
    // Advice that works outside a checkout of odr.
    #expect(result.stderr.contains("odr exec --fetch TAG") && result.stderr.contains("dbus-run-session"))
    #expect(!result.stderr.contains("scripts/with-keyring") && !result.stderr.contains("APIKeyProvider"))
    #expect(result.duration < .seconds(1))
  }

  /// libsecret (and GLib) are loaded on first use, not linked: on a machine
  /// without them odr still starts, and a keyring command says what is
  /// missing and how to install it. Here libsecret is hidden by an empty
  /// file mounted over it, in a mount namespace of the test's own.
  @Test func aMissingLibsecretIsSaidNotACrashAtStart() async throws {
    let script = #"""
      library=$(/sbin/ldconfig -p | awk '/libsecret-1[.]so[.]0 / { print $NF; exit }')
      [ -n "$library" ] && mount --bind /dev/null "$(readlink -f "$library")" || { echo "cannot hide libsecret"; exit 99; }
      "$0" --version >/dev/null; echo "version: $?"
      "$0" get Weather --service com.example.nolibrary; echo "get: $?"
      printf v | "$0" set Weather --store kernel --service com.example.nolibrary >/dev/null && "$0" get Weather --store kernel --service com.example.nolibrary; echo " kernel: $?"
      """#
    let result = try await Command.run("/usr/bin/unshare", ["--user", "--map-root-user", "--mount", "--", "keyctl", "session", "-", "sh", "-c", script, Paths.odr.path],
                                       environment: environment(bus: "unix:path=/nonexistent/bus"))
    #expect(result.stdout == "version: 0\nget: 5\nv kernel: 0\n", "\(result.stdout)\n\(result.stderr)")
    #expect(result.stderr.contains("odr: libsecret could not be loaded ("), "\(result.stderr)")
    #expect(result.stderr.contains("so the desktop keyring cannot be used. Install it (`sudo apt install libsecret-1-0`), or: "), "\(result.stderr)")
    #expect(result.stderr.contains("`--store kernel`") && !result.stderr.contains("APIKeyProvider"), "\(result.stderr)")
  }

  /// The throwaway keyring odr advises without a bus runs as printed —
  /// with `odr set` and `odr get` for `odr …` — in a home without a
  /// keyring and in one whose login keyring is locked with another
  /// password (the advice of before made no collection there: exit 5, or
  /// asked for the locked one: exit 6).
  @Test func theNoKeyringAdviceRunsAsPrinted() async throws {
    let advice = try await Command.odr(["get", "Weather", "--service", service], environment: environment(bus: nil), exclusive: true).stderr
    let start = try #require(advice.range(of: "`dbus-run-session"), "\(advice)")
    let line = String(advice[advice.index(after: start.lowerBound)...].prefix { $0 != "`" })
    #expect(advice.contains("`--store kernel`") && advice.contains("odr exec --fetch TAG"))
    let root = FileManager.default.temporaryDirectory.appending(path: "odr-advice-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }  // best effort: the test is over
    let odr = Paths.odr.path
    var env = environment(bus: nil)
    for name in ["DBUS_SESSION_BUS_ADDRESS", "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "ODR_SERVICE"] { env[name] = nil }
    for home in ["fresh", "locked-login"] {
      env["HOME"] = root.appending(path: home).path
      try FileManager.default.createDirectory(at: root.appending(path: home), withIntermediateDirectories: true)
      if home == "locked-login" {
        let made = try await Command.run("/usr/bin/dbus-run-session", ["--", "/bin/sh", "-c", """
          printf other | gnome-keyring-daemon --unlock --components=secrets >/dev/null && printf v0 | '\(odr)' set Old --service \(service) --quiet
          """], environment: env)
        try #require(made.status == 0 && FileManager.default.fileExists(atPath: root.appending(path: "\(home)/.local/share/keyrings/login.keyring").path),
                     "\(made.stderr)")
      }
      let command = "printf v1 | '\(odr)' set K --service \(service) --quiet && '\(odr)' get K --service \(service)"
      let result = try await Command.run("/bin/sh", ["-c", line.replacingOccurrences(of: "odr …", with: command)], environment: env)
      #expect(result.status == 0 && result.stdout == "v1", "\(home): \(result.stdout)\(result.stderr)")
    }
  }

  @Test func busWithoutProviderExitsFive() async throws {
    let session = try await KeyringSession.start()
    kill(session.daemonPID, SIGKILL)
    // The provider is gone once its name is released; give it a moment.
    var result = try await odr(["get", "Weather"], in: session)
    for _ in 0..<20 where result.status != 5 {
      try await Task.sleep(for: .milliseconds(50))
      result = try await odr(["get", "Weather"], in: session)
    }
    #expect(result.status == 5)
    #expect(result.stderr.contains("No Secret Service provider"))
  }

  @Test func stoppedDaemonTimesOutWithinTheDeadline() async throws {
    let session = try await KeyringSession.start()
    kill(session.daemonPID, SIGSTOP)
    defer { kill(session.daemonPID, SIGCONT) }
    let result = try await Command.odr(["get", "Weather", "--timeout", "0.5", "--service", service], environment: session.environment, exclusive: true)
    #expect(result.status == 9)
    #expect(result.stderr.contains("did not answer within 500 ms"))
    #expect(result.duration < .seconds(2))
  }

  @Test func invalidNamesAreRefusedBeforeTouchingTheBus() async throws {
    // With no bus at all, a bad name still gets the usage error, not exit 5.
    let result = try await Command.odr(["get", "bad name", "--service", service], environment: environment(bus: "unix:path=/nonexistent/bus"))
    #expect(result.status == 2)
    #expect(result.stderr.contains("Invalid key name"))
  }

  @Test func doctorReportsEachProblemWithItsCode() async throws {
    let session = try await KeyringSession.start()
    let ready = try await Command.odr(["doctor"], environment: session.environment)
    #expect(ready.status == 0)
    #expect(ready.stdout.contains("The keyring is ready."))
    try await session.lock()
    let locked = try await Command.odr(["doctor", "--json"], environment: session.environment)
    #expect(locked.status == 6)
    let report = try JSONSerialization.jsonObject(with: Data(locked.stdout.utf8)) as? [String: Any]
    #expect(report?["locked"] as? Bool == true)
    #expect((report?["problem"] as? [String: Any])?["code"] as? String == "locked")
    let noBus = try await Command.odr(["doctor"], environment: environment(bus: "unix:path=/nonexistent/bus"))
    #expect(noBus.status == 5)
    #expect(noBus.stdout.contains("FAIL session bus"))
    // What it could not read is not "none" (a user would make a new identity for nothing).
    #expect(noBus.stdout.contains("identities: not readable") && !noBus.stdout.contains("identities: none"), "\(noBus.stdout)")
    // The kernel store needs no bus: nothing fails for its absence.
    var kernel = environment(bus: "unix:path=/nonexistent/bus")
    kernel["XDG_STATE_HOME"] = session.environment["XDG_STATE_HOME"]
    let withKernel = try await Command.odr(["doctor", "--store", "kernel"], environment: kernel)
    #expect(withKernel.status == 0 && !withKernel.stdout.contains("FAIL") && withKernel.stdout.contains("session bus: not needed"), "\(withKernel.stdout)")
    // A bus at $XDG_RUNTIME_DIR/bus, where D-Bus clients look when the variable is unset.
    let runtime = FileManager.default.temporaryDirectory.appending(path: "odr-runtime-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: runtime) }  // best effort: the test is over
    let busPath = try #require(session.environment["DBUS_SESSION_BUS_ADDRESS"]?.split(separator: "=", maxSplits: 1).last.map(String.init))
    try FileManager.default.createSymbolicLink(atPath: runtime.appending(path: "bus").path, withDestinationPath: busPath)
    var fallback = session.environment
    fallback["DBUS_SESSION_BUS_ADDRESS"] = nil
    fallback["XDG_RUNTIME_DIR"] = runtime.path
    let found = try await Command.odr(["doctor"], environment: fallback)
    #expect(found.stdout.contains("ok   session bus: unix:path=\(runtime.path)/bus (found in $XDG_RUNTIME_DIR"), "\(found.stdout)")
  }
}
