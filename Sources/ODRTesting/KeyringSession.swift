public import Foundation
import ODRBase

/// A private D-Bus session with a fresh, unlocked gnome-keyring, started
/// through `scripts/with-keyring` and torn down when the session ends (or
/// when the test process dies: the script's stdin closes and it cleans up).
///
/// Tests that lock, stop or kill the keyring use their own session; tests
/// that only read and write use ``shared`` with a unique service id.
public final class KeyringSession: @unchecked Sendable {
  /// The bus address, for child processes' `DBUS_SESSION_BUS_ADDRESS`.
  public let busAddress: String
  /// The gnome-keyring-daemon's pid.
  public let daemonPID: Int32
  /// The session's temporary home (keyring files live below it).
  public let directory: URL
  private let script: Process?
  private let control: Pipe?

  /// The Secret Service providers `scripts/with-keyring` can start.
  public enum Provider: String, Sendable {
    case gnomeKeyring = "gnome-keyring"
    /// KeePassXC's FdoSecrets, headless, on a database made for the session.
    case keepassxc
    /// Tests/Peers/fake_secret_service.py: scripted faults.
    case fake
  }

  /// The provider the tests run against: `$ODR_KEYRING_PROVIDER` (set by
  /// `scripts/with-keyring`), gnome-keyring by default.
  public static var provider: Provider {
    ProcessInfo.processInfo.environment["ODR_KEYRING_PROVIDER"].flatMap(Provider.init(rawValue:)) ?? .gnomeKeyring
  }

  /// The attributes `provider` adds to every item on its own (KeePassXC
  /// keeps each item as an entry with these fields).
  public static var providerOwnAttributes: Set<String> {
    provider == .keepassxc ? ["Title", "UserName", "URL", "Notes", "Path", "Uuid"] : []
  }

  /// Starts a new private session with `provider` (the tests' provider when
  /// nil); for the fake, `faults` is its fault script (JSON) from the start.
  public init(provider: Provider? = nil, faults: String? = nil) throws {
    let script = Process()
    script.executableURL = Paths.packageRoot.appending(path: "scripts/with-keyring")
    script.arguments = ["sh", "-c", "echo \"$DBUS_SESSION_BUS_ADDRESS $ODR_KEYRING_PID $ODR_KEYRING_DIR\"; exec cat >/dev/null"]
    var environment = ProcessInfo.processInfo.environment
    environment["ODR_KEYRING_PROVIDER"] = (provider ?? Self.provider).rawValue
    environment["ODR_FAKE_FAULTS"] = faults
    script.environment = environment
    let control = Pipe(), output = Pipe()
    script.standardInput = control
    script.standardOutput = output
    try script.run()
    guard let line = output.fileHandleForReading.readLine(), case let parts = line.split(separator: " "), parts.count == 3,
          let pid = Int32(parts[1])
    else { throw TestFailure("scripts/with-keyring did not start a keyring session (run scripts/bootstrap?)") }
    self.busAddress = String(parts[0])
    self.daemonPID = pid
    self.directory = URL(filePath: String(parts[2]))
    self.script = script
    self.control = control
  }

  /// `init`, waiting for the session on a thread of its own rather than
  /// on the cooperative pool.
  public static func start(provider: Provider? = nil, faults: String? = nil) async throws -> KeyringSession {
    try await Command.offPool { try KeyringSession(provider: provider, faults: faults) }
  }

  // MARK: The fake provider

  /// Gives the fake provider a new fault script (JSON, see
  /// Tests/Peers/fake_secret_service.py) and resets its call counts.
  public func configure(faults: String) async throws {
    try await send(to: "/org/odr/Fake", "org.odr.Fake.Configure", "string:\(faults)")
  }

  /// The fake's call counts since the last ``configure(faults:)``.
  public func stats() async throws -> (calls: Int, mutations: Int) {
    let result = try await Command.run("/usr/bin/dbus-send", ["--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/odr/Fake",
                                                              "org.odr.Fake.Stats"], environment: environment)
    guard let start = result.stdout.firstIndex(of: "{"), let end = result.stdout.lastIndex(of: "}"),
          // not JSON: no statistics, and the test asserting them fails
          let json = dropping(.isTheAnswer, { try JSONSerialization.jsonObject(with: Data(result.stdout[start...end].utf8)) as? [String: Any] }),
          let calls = json["calls"] as? Int, let mutations = json["mutations"] as? Int
    else { throw TestFailure("the fake provider's Stats answered \(result.output)") }
    return (calls, mutations)
  }

  /// Brings a crashed fake back on the bus (from its state file) and waits
  /// until it owns the name again.
  public func revive() async throws {
    kill(daemonPID, SIGUSR1)
    for _ in 0..<400 {
      let owner = try await Command.run("/usr/bin/dbus-send", ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                               "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.secrets"], environment: environment)
      if owner.stdout.contains("boolean true") { return }
      try await Task.sleep(for: .milliseconds(5))
    }
    throw TestFailure("the fake provider did not come back within 2 s")
  }

  /// The fake's state file (its items, as it would keep them on disk).
  public var fakeState: URL { directory.appending(path: "fake-state.json") }

  private init(busAddress: String, daemonPID: Int32, directory: URL) {
    self.busAddress = busAddress
    self.daemonPID = daemonPID
    self.directory = directory
    self.script = nil
    self.control = nil
  }

  deinit { end() }

  /// Stops the daemon and the bus and removes the session's files: the
  /// script does it when its stdin closes, without this thread waiting.
  public func end() {
    guard let script, script.isRunning else { return }
    kill(daemonPID, SIGCONT)
    // the provider may be gone already
    dropping(.cleanup) { try control?.fileHandleForWriting.close() }
  }

  /// The environment a child process needs to use this session's keyring.
  public var environment: [String: String] {
    var env = ProcessInfo.processInfo.environment
    env["DBUS_SESSION_BUS_ADDRESS"] = busAddress
    // No display: odr would ask a desktop prompter to unlock, and this session has none.
    env["DISPLAY"] = nil
    env["WAYLAND_DISPLAY"] = nil
    return env
  }

  /// Starts another gnome-keyring-daemon on this session's bus and files,
  /// after the first one was killed: it serves the keyring as the first one
  /// left it on disk. Returns its pid; SIGKILL it when done.
  public func startDaemonAgain() throws -> Int32 {
    let root = directory.path
    let daemon = Process()
    daemon.executableURL = URL(filePath: "/usr/bin/env")
    daemon.arguments = ["-u", "DISPLAY", "-u", "WAYLAND_DISPLAY", "HOME=\(root)/home", "XDG_DATA_HOME=\(root)/data",
                        "XDG_CONFIG_HOME=\(root)/config", "XDG_RUNTIME_DIR=\(root)/runtime", "XDG_CACHE_HOME=\(root)/cache",
                        "gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"]
    daemon.environment = environment
    let password = Pipe()
    daemon.standardInput = password
    daemon.standardOutput = FileHandle.nullDevice
    daemon.standardError = FileHandle.nullDevice
    try daemon.run()
    password.fileHandleForWriting.write(Data("odr-test".utf8))
    try password.fileHandleForWriting.close()
    for _ in 0..<200 {
      let owner = try Command.runBlocking("/usr/bin/dbus-send", ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                         "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.secrets"], environment: environment)
      if owner.stdout.contains("boolean true") { return daemon.processIdentifier }
      usleep(25_000)
    }
    kill(daemon.processIdentifier, SIGKILL)
    throw TestFailure("gnome-keyring-daemon did not come back within 5 s")
  }

  /// Locks the login collection through the Secret Service API, and
  /// returns once the collection itself says it is locked, asking again if
  /// not. (In one loaded run `odr doctor` found it unlocked right after
  /// gnome-keyring had answered the Lock; why is not known.)
  public func lock() async throws {
    for _ in 0..<20 {
      try await send(to: "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.Lock",
               "array:objpath:/org/freedesktop/secrets/collection/login")
      let locked = try await send(to: "/org/freedesktop/secrets/collection/login", "org.freedesktop.DBus.Properties.Get",
                                  "string:org.freedesktop.Secret.Collection", "string:Locked")
      if locked.contains("boolean true") { return }
    }
    throw TestFailure("the login collection did not stay locked")
  }

  /// Points the `default` alias at the in-memory session collection, so the
  /// login collection becomes one that new items do not go to.
  public func makeSessionCollectionTheDefault() async throws {
    try await send(to: "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.SetAlias", "string:default",
             "objpath:/org/freedesktop/secrets/collection/session")
  }

  /// Deletes the login collection, leaving the `default` alias dangling.
  public func deleteDefaultCollection() async throws {
    try await send(to: "/org/freedesktop/secrets/collection/login", "org.freedesktop.Secret.Collection.Delete")
  }

  /// Calls `method` on the provider's object at `path`; the reply as dbus-send prints it.
  @discardableResult
  private func send(to path: String, _ method: String, _ arguments: String...) async throws -> String {
    let result = try await Command.run("/usr/bin/dbus-send", ["--session", "--print-reply", "--dest=org.freedesktop.secrets", path, method] + arguments,
                                 environment: environment)
    guard result.status == 0 else { throw TestFailure("dbus-send \(method) failed: \(result.stderr)") }
    return result.stdout
  }

  /// The session the test process itself uses: the one `scripts/with-keyring`
  /// runs the tests in, or else one started on first use. Its bus becomes
  /// this process's `DBUS_SESSION_BUS_ADDRESS` before any keyring call.
  public static let shared: KeyringSession = {
    let env = ProcessInfo.processInfo.environment
    if let address = env["DBUS_SESSION_BUS_ADDRESS"], let pid = env["ODR_KEYRING_PID"].flatMap(Int32.init),
       let dir = env["ODR_KEYRING_DIR"] {
      return KeyringSession(busAddress: address, daemonPID: pid, directory: URL(filePath: dir))
    }
    do {
      let session = try KeyringSession()
      setenv("DBUS_SESSION_BUS_ADDRESS", session.busAddress, 1)
      return session
    } catch {
      fatalError("No keyring for the tests: \(error). Run the tests with scripts/test.")
    }
  }()
}

extension FileHandle {
  /// One line read byte by byte (nothing past the newline is consumed).
  public func readLine() -> String? {
    var bytes: [UInt8] = []
    // end of file or a read error both end the line
    while let byte = dropping(.isTheAnswer, { try read(upToCount: 1) }), let b = byte.first {
      if b == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
      bytes.append(b)
    }
    return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
  }
}
