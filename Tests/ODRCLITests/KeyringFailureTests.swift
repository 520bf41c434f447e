import Foundation
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
    #expect(!result.stderr.contains("scripts/with-keyring"))
    #expect(result.duration < .seconds(1))
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
  }
}
