import Foundation
import ODRCLITesting
import ODRTesting
import Testing

/// `--store kernel` end to end: the built `odr` with no D-Bus at all, each
/// step a process of its own, `keyctl` as the peer. Each test runs in a user
/// namespace of its own (`unshare --user`), whose user keyring is new and
/// goes with it: nothing is left in this machine's keyrings.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct KernelStoreCommandTests {
  var root = FileManager.default.temporaryDirectory.appending(path: "odr-kernel-\(UUID().uuidString)")
  /// The odr the scripts run (`$ODR`).
  var odr = Paths.odr.path
  let bundle = "com.odr.kernel.\(UUID().uuidString.prefix(8).lowercased())"
  let weather = "w-\(UUID().uuidString)"
  let maps = "m-\(UUID().uuidString)"
  let typed = "t-\(UUID().uuidString)"

  /// No bus, no keyring daemon: only the kernel.
  var environment: [String: String] {
    var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ODR_") && !$0.key.hasPrefix("DBUS") && $0.key != "XDG_RUNTIME_DIR" }
    env["HOME"] = root.appending(path: "home").path
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    env["XDG_CONFIG_HOME"] = root.appending(path: "config").path
    env["TMPDIR"] = root.appending(path: "tmp").path
    env["ODR_STORE"] = "kernel"
    env["ODR_SERVICE"] = bundle
    env["ODR_CATALOG"] = "file://" + root.appending(path: "pub").path
    env["ODR"] = odr
    return env
  }

  /// Runs `script` with sh in a new user namespace (as root in it, or as
  /// `user` outside it), in a session keyring of its own: the test
  /// process's session keyring is shared by every test running at once, and
  /// odr links its user keyring into the session keyring it runs in.
  func inNamespace(_ script: String, as user: Int? = nil) async throws -> Command.Result {
    let unshare = ["unshare", "--user"] + (user == nil ? ["--map-root-user"] : []) + ["keyctl", "session", "-", "sh", "-c", script]
    let drop = user.map { ["setpriv", "--reuid=\($0)", "--regid=\($0)", "--clear-groups"] } ?? []
    return try await Command.run("/usr/bin/env", drop + unshare, environment: environment)
  }

  func publish() async throws {
    let source = root.appending(path: "src")
    for folder in ["src", "tmp", "home"] { try FileManager.default.createDirectory(at: root.appending(path: folder), withIntermediateDirectories: true) }
    try Data(#"{"bundle": "\#(bundle)", "tags": {"APIKeys": {"category": "prefetch", "secrets": true, "files": ["APIKeys.json"]}}}"#.utf8)
      .write(to: source.appending(path: "tags.json"))
    try Data(#"{"keys": {"Weather": {"value": "\#(weather)", "env": "WEATHER_KEY"}, "Maps": {"value": "\#(maps)"}}}"#.utf8).write(to: source.appending(path: "APIKeys.json"))
    let pack = try await Command.odr(["pack", source.path, "--output", root.appending(path: "pub").path, "--plaintext-secrets", "--quiet"], environment: environment)
    try #require(pack.status == 0, "\(pack.stderr)")
  }

  @Test func everyKeyCommandWorksWithNoBusAndKeyctlReadsWhatOdrStored() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await publish()
    let result = try await inNamespace("""
      printf '%s' '\(typed)' | "$ODR" set Typed || exit 1
      echo "get: $("$ODR" get Typed)"
      "$ODR" fetch APIKeys
      echo "list: $("$ODR" list | tr '\\n' ' ')"
      echo "keyctl: $(keyctl pipe %user:odr:\(bundle):Weather)"
      keyctl session - sh -c '"$ODR" get Weather; echo; printf %s fresh | "$ODR" set Fresh && "$ODR" get Fresh && "$ODR" delete Fresh >/dev/null' | tr '\\n' ' ' | sed 's/^/fresh session keyring: /'; echo
      "$ODR" exec -- sh -c '[ "$WEATHER_KEY" = "\(weather)" ] && echo "exec: injected"'
      "$ODR" env --format json --only Maps | grep -c '"\(maps)"' | sed 's/^/env: /'
      echo "read: $("$ODR" read odr://\(bundle)/Maps)"
      "$ODR" delete Maps
      "$ODR" get Maps; echo "get deleted: $?"
      "$ODR" fetch APIKeys
      echo "refetched: $("$ODR" get Maps)"
      "$ODR" doctor >/dev/null; echo "doctor: $?"
      "$ODR" doctor | grep -F "keys: \(bundle) holds"
      """)
    #expect(result.status == 0, "\(result.stderr)")
    let lines = result.stdout.split(separator: "\n").map(String.init)
    #expect(lines == [
      "get: \(typed)", "added     Maps", "added     Weather", "list: Maps Typed Weather ", "keyctl: \(weather)", "fresh session keyring: \(weather) fresh", "exec: injected", "env: 1",
      "read: \(maps)", "get deleted: 3", "added     Maps", "unchanged Weather", "refetched: \(maps)", "doctor: 0", "keys: \(bundle) holds 3 keys",
    ], "\(result.stdout)\n\(result.stderr)")
    #expect(result.stderr.contains("keys of \(bundle) are in the kernel keyring") && result.stderr.contains("'Maps' for service '\(bundle)' in the kernel keyring"))
    // Nothing of any value on disk: odr's cache, state, config and temporary folders.
    for folder in ["cache", "state", "config", "tmp", "home"] {
      for file in FileManager.default.enumerator(atPath: root.appending(path: folder).path)?.allObjects as? [String] ?? [] {
        let data = (try? Data(contentsOf: root.appending(path: folder).appending(path: file))) ?? Data()  // a folder reads as nothing
        for secret in [typed, weather, maps] { #expect(data.range(of: Data(secret.utf8)) == nil, "\(folder)/\(file)") }
      }
    }
  }

  /// The kernel keyring is emptied at reboot: an identity made there warns
  /// and offers a 0600 copy, and an empty store says why a key is missing
  /// (a new user namespace is a freshly booted kernel's keyring).
  /// The keyring's libraries (libsecret, GLib, and libgcrypt under them)
  /// are loaded when a command first touches the desktop keyring: the
  /// kernel store and the resource commands never map them. The dynamic
  /// loader's own log (LD_DEBUG=libs) says what each process loaded; a key
  /// read from the Secret Service is the control that loads them.
  @Test func onlyTheDesktopKeyringLoadsItsLibraries() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await publish()
    let docs = root.appending(path: "docs")
    try FileManager.default.createDirectory(at: docs, withIntermediateDirectories: true)
    try Data(#"{"bundle": "\#(bundle)", "tags": {"Docs": {"category": "onDemand", "files": ["a.txt"]}}}"#.utf8).write(to: docs.appending(path: "tags.json"))
    try Data("docs".utf8).write(to: docs.appending(path: "a.txt"))
    let pack = try await Command.odr(["pack", docs.path, "--output", root.appending(path: "docs-pub").path, "--quiet"], environment: environment)
    try #require(pack.status == 0, "\(pack.stderr)")
    let result = try await inNamespace("""
      loaded() { log="$HOME/ld-$1"; shift; LD_DEBUG=libs LD_DEBUG_OUTPUT="$log" "$ODR" "$@" >/dev/null 2>&1; s=$?
        echo "$s $(cat "$log".* | grep -oE 'lib(secret-1|glib-2[.]0|gio-2[.]0|gobject-2[.]0|gcrypt)[.]so[.][0-9]+' | sort -u | tr '\\n' ' ')"; }
      printf v | "$ODR" set Typed || exit 1
      echo "get --store kernel: $(loaded get get Typed)"
      echo "fetch --store kernel: $(loaded fetch fetch APIKeys)"
      export ODR_CATALOG="\(root.path)/docs-pub"
      echo "begin: $(loaded begin begin Docs)"
      echo "path: $(loaded path path Docs)"
      echo "status: $(loaded status status)"
      echo "verify: $(loaded verify verify "$ODR_CATALOG")"
      echo "get --store secret-service: $(loaded control get Typed --store secret-service)"
      """)
    #expect(result.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) } == [
      "get --store kernel: 0", "fetch --store kernel: 0", "begin: 0", "path: 0", "status: 0",
      "verify: 4",  // an unsigned catalog: verify says so
      "get --store secret-service: 5 libgcrypt.so.20 libgio-2.0.so.0 libglib-2.0.so.0 libgobject-2.0.so.0 libsecret-1.so.0",
    ], "\(result.stdout)\n\(result.stderr)")
  }

  @Test func whatTheKernelLosesAtRebootIsSaid() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await publish()
    let result = try await inNamespace("""
      "$ODR" get Weather; echo "get: $?"
      "$ODR" identity new server >/dev/null
      "$ODR" identity export server -o "$HOME/server.identity" && stat -c 'copy: %a' "$HOME/server.identity"
      "$ODR" identity export server -o "$HOME/server.identity"; echo "again: $?"
      recipient=$("$ODR" identity recipient server)
      "$ODR" identity delete server 2>/dev/null
      "$ODR" identity recipient server; echo "recipient: $?"
      "$ODR" pack "\(root.path)/src" --output "\(root.path)/encrypted" --recipient "$recipient" --quiet
      "$ODR" fetch APIKeys --catalog "\(root.path)/encrypted"; echo "fetch: $?"
      "$ODR" identity import server < "$HOME/server.identity" 2>/dev/null && echo imported
      printf v | "$ODR" set Weather 2>/dev/null
      "$ODR" get Weathr; echo "typo: $?"
      """)
    let lines = result.stdout.split(separator: "\n").map(String.init)
    #expect(lines == ["get: 3", "copy: 600", "again: 1", "recipient: 3", "fetch: 10", "imported", "typo: 3"], "\(result.stdout)\n\(result.stderr)")
    #expect(result.stderr.contains("The kernel keyring holds no identity: it is emptied at reboot"), "\(result.stderr)")
    #expect(result.stderr.contains("No key 'Weathr' for service '\(bundle)' in the kernel keyring. Did you mean 'Weather'?"), "\(result.stderr)")
    #expect(result.stderr.contains("holds nothing of \(bundle): it is emptied at reboot, so fetch again"), "\(result.stderr)")
    #expect(result.stderr.contains("the kernel keyring is emptied at reboot, and 'server' with it") && result.stderr.contains("export server -o FILE"), "\(result.stderr)")
    #expect(result.stderr.contains("No identity 'server': the kernel keyring holds none, and it is emptied at reboot"), "\(result.stderr)")
  }

  /// `--ttl`: kernel keys that expire (they otherwise outlive logout and
  /// the account); a fetch of unchanged keys renews them; refused for the
  /// Secret Service, which has no lifetime.
  @Test func kernelKeysExpireAfterTheirTTL() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await publish()
    // /proc/keys' fourth column: "perm", or the time left ("4m", "59s").
    let result = try await inNamespace("""
      expiry() { awk -v d="odr:\(bundle):$1" '$9 == d":" { print $4 }' /proc/keys; }
      printf v | "$ODR" set Typed --ttl 5m 2>/dev/null; echo "set --ttl: $(expiry Typed)"
      printf v | "$ODR" set Typed 2>/dev/null; echo "set again: $(expiry Typed)"
      "$ODR" fetch APIKeys >/dev/null 2>&1; echo "fetched: $(expiry Weather)"
      "$ODR" fetch APIKeys --ttl 1h >/dev/null 2>&1; echo "refetched unchanged --ttl: $(expiry Weather)"
      printf v | "$ODR" set Other --ttl 5m --store secret-service; echo "secret service: $?"
      """)
    let lines = result.stdout.split(separator: "\n").map(String.init)
    try #require(lines.count == 5, "\(result.stdout)\n\(result.stderr)")
    func expires(_ line: String, _ label: String) -> Bool {
      line.hasPrefix(label + ": ") && !["perm", ""].contains(line.dropFirst(label.count + 2))
    }
    #expect(expires(lines[0], "set --ttl"), "\(lines[0])")
    #expect(lines[1] == "set again: perm")
    #expect(lines[2] == "fetched: perm")
    #expect(expires(lines[3], "refetched unchanged --ttl"), "\(lines[3])")
    #expect(lines[4] == "secret service: 2")
    #expect(result.stderr.contains("--ttl applies to the kernel store"), "\(result.stderr)")
  }
}

/// What needs root: odr as another user (uid 65534, whose kernel quota no
/// other test shares), with its own copy of odr in a folder that user can
/// reach (the suite's may be in one only root can enter). Run by
/// scripts/test's root phase (`ODR_TESTS=root`).
@Suite(.enabled(if: TestSelection.root), .timeLimit(.minutes(2))) struct KernelStoreAsRootTests {
  let world: KernelStoreCommandTests

  /// A folder under /var/tmp (open to every user), not under the suite's
  /// TMPDIR (root's), with odr copied into it.
  init() throws {
    let root = URL(filePath: "/var/tmp").appending(path: "odr-kernel-\(UUID().uuidString)")
    let bin = root.appending(path: "bin")
    try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
    try FileManager.default.copyItem(at: Paths.odr, to: bin.appending(path: "odr"))
    for folder in [root, bin] { try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder.path) }
    world = KernelStoreCommandTests(root: root, odr: bin.appending(path: "odr").path)
  }

  /// A user other than root: the kernel's quota (20,000 bytes by default)
  /// and its limit on one value, each with its own message and exit code.
  @Test func theQuotaAndTheSizeLimitAreSaid() async throws {
    try #require(getuid() == 0, "the root group runs as root (scripts/test)")
    defer { try? FileManager.default.removeItem(at: world.root) }
    let result = try await world.inNamespace("""
      head -c 40000 /dev/zero | tr '\\0' x | "$ODR" set Big; echo "big: $?"
      i=0
      while [ $i -lt 10 ]; do
        head -c 3000 /dev/zero | tr '\\0' y | "$ODR" set K$i 2>/dev/null || break
        i=$((i + 1))
      done
      head -c 3000 /dev/zero | tr '\\0' y | "$ODR" set K$i; echo "full: $? after $i"
      """, as: 65534)
    #expect(result.stdout.contains("big: 2"), "\(result.stdout)\n\(result.stderr)")
    #expect(result.stderr.contains("at most 32767 bytes in one key"), "\(result.stderr)")
    #expect(result.stdout.contains("full: 8 after 6"), "\(result.stdout)\n\(result.stderr)")
    #expect(result.stderr.contains("The kernel keyring's quota is full"), "\(result.stderr)")
  }
}
