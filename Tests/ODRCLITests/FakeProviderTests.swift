import Foundation
import ODRCLITesting
import ODRTesting
import Testing

/// odr against a Secret Service provider that misbehaves on cue
/// (Tests/Peers/fake_secret_service.py on a private bus): every exit code of
/// docs/design.md's keyring rows, the unlock prompt's three endings, a
/// provider that vanishes or is replaced mid-call, and answers that break
/// the API. Each test has a provider of its own.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct FakeProviderTests {
  let service = "com.odr.fake.\(UUID().uuidString.prefix(8).lowercased())"

  func odr(_ arguments: [String], _ session: KeyringSession, input: String? = nil, display: Bool = false) async throws -> Command.Result {
    var environment = session.environment
    if display { environment["DISPLAY"] = ":99" }
    return try await Command.odr(arguments + ["--service", service], input: input, environment: environment)
  }

  func store(_ keys: [String: String], _ session: KeyringSession) async throws {
    for (name, value) in keys {
      let set = try await odr(["set", name], session, input: value)
      try #require(set.status == 0, "\(set.stderr)")
    }
  }

  /// One failure per row of the exit-code table that the keyring reaches,
  /// each as one line that says what happened.
  @Test(arguments: [
    ("{}", ["get", "Missing"], 3, "No key 'Missing'"),
    (#"{"no_default": true}"#, ["set", "K"], 5, "no default collection"),
    (#"{"crash": {"call": 3}}"#, ["get", "K"], 5, "went away while odr was using it"),
    (#"{"locked": true}"#, ["get", "K"], 6, "is locked"),
    (#"{"delay": [{"method": "SearchItems", "seconds": 3}]}"#, ["get", "K", "--timeout", "0.5"], 9, "did not answer within 500 ms"),
    (#"{"fail": [{"method": "CreateItem", "message": "the provider's disk is full"}]}"#, ["set", "K"], 1, "the provider's disk is full"),
    ("{}", ["get", "bad name"], 2, "Invalid key name"),
  ])
  func everyKeyringExitCode(faults: String, arguments: [String], status: Int32, message: String) async throws {
    let session = try await KeyringSession.start(provider: .fake, faults: faults)
    defer { session.end() }
    let result = try await odr(arguments, session, input: "k-value")
    #expect(result.status == status, "\(result.stderr)")
    #expect(result.stderr.contains(message), "\(result.stderr)")
    #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    #expect(!result.stderr.contains("k-value"))
  }

  @Test func noBusAndNoProviderAreUnavailable() async throws {
    let session = try await KeyringSession.start(provider: .fake, faults: #"{"crash": {"call": 1}}"#)
    defer { session.end() }
    // The first call takes the provider down; the next command finds no one.
    _ = try await odr(["get", "K"], session)
    let gone = try await odr(["get", "K"], session)
    #expect(gone.status == 5 && gone.stderr.contains("No Secret Service provider is running"), "\(gone.stderr)")
    var environment = session.environment
    environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(session.directory.path)/no-bus"
    let noBus = try await Command.odr(["get", "K", "--service", service], environment: environment)
    #expect(noBus.status == 5 && noBus.stderr.contains("No D-Bus session bus"), "\(noBus.stderr)")
  }

  /// A locked collection on a desktop (DISPLAY set): libsecret and odr ask
  /// the provider to unlock it, and its prompt decides — answered,
  /// dismissed, or never answered (bounded by --timeout).
  @Test(arguments: [("complete", Int32(0), "k-prompt"), ("dismiss", 6, "unlock prompt was dismissed"), ("never", 9, "prompt was not answered within 1 s")])
  func unlockPrompt(ending: String, status: Int32, says: String) async throws {
    let session = try await KeyringSession.start(provider: .fake)
    defer { session.end() }
    try await store(["K": "k-prompt"], session)
    try await session.lock()
    try await session.configure(faults: #"{"prompt": "\#(ending)"}"#)
    let get = try await odr(["get", "K", "--timeout", "1"], session, display: true)
    #expect(get.status == status, "\(get.stderr)")
    #expect((get.stdout + get.stderr).contains(says), "\(get.output)")
    #expect(get.duration < .seconds(4))
  }

  /// Another provider takes the bus name mid-command (a restarted daemon
  /// with the same items): odr says so, not "locked" or "not found".
  @Test func aProviderReplacedMidCommandIsNamed() async throws {
    let session = try await KeyringSession.start(provider: .fake)
    defer { session.end() }
    try await store(["A": "a-1", "B": "b-1"], session)
    try await session.configure(faults: #"{"replace": {"call": 2}}"#)
    let env = try await odr(["env", "--format", "json"], session)
    #expect(env.status == 5, "\(env.output)")
    #expect(env.stderr.contains("restarted or replaced"), "\(env.stderr)")
    #expect(!env.stdout.contains("a-1"))
  }

  /// Answers that break the API are refused as a whole, never read as fewer keys.
  @Test(arguments: [(#"{"short_secrets": true}"#, "sent the secrets of only"), (#"{"strip_attributes": true}"#, "attributes do not match")])
  func brokenAnswersAreRefused(faults: String, says: String) async throws {
    let session = try await KeyringSession.start(provider: .fake)
    defer { session.end() }
    try await store(["A": "a-1", "B": "b-1", "C": "c-1"], session)
    try await session.configure(faults: faults)
    let env = try await odr(["env", "--format", "json"], session)
    #expect(env.status == 1, "\(env.output)")
    #expect(env.stderr.contains(says), "\(env.stderr)")
    #expect(env.stdout.isEmpty)
  }

  /// libsecret opens a plain session when the provider refuses Diffie-Hellman.
  @Test func aPlainSessionWorks() async throws {
    let session = try await KeyringSession.start(provider: .fake, faults: #"{"plain_only": true}"#)
    defer { session.end() }
    try await store(["K": "k-plain"], session)
    let get = try await odr(["get", "K"], session)
    #expect(get.stdout == "k-plain", "\(get.stderr)")
  }
}
