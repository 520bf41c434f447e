import Foundation
import ODRAge
import ODRCLITesting
import ODRTesting
import ODRSigning
import Testing

/// The outside red team's findings (issue "Trust anchored in what the user
/// chose"), each replayed against the built `odr`, the real keyring and
/// real servers. The number in each test's comment is the finding's.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(3))) struct RedTeamTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-redteam-\(UUID().uuidString)")
  let bundle = "com.odr.redteam.\(UUID().uuidString.prefix(8).lowercased())"
  let value = "rt-\(UUID().uuidString)"
  let suffix = UUID().uuidString.prefix(8).lowercased()
  var source: URL { root.appending(path: "src") }
  var published: URL { root.appending(path: "pub") }
  var state: URL { root.appending(path: "state") }
  var cache: URL { root.appending(path: "cache") }
  var environment: [String: String] {
    var env = KeyringSession.shared.environment
    env["XDG_CACHE_HOME"] = cache.path
    env["XDG_STATE_HOME"] = state.path
    env["TMPDIR"] = root.appending(path: "tmp").path
    env["ODR_CATALOG"] = "file://" + published.path
    for name in ["ODR_SERVICE", "ODR_IDENTITY", "ODR_TRUST", "ODR_SIGNING_KEY", "CI"] { env[name] = nil }
    return env
  }

  init() throws {
    try FileManager.default.createDirectory(at: root.appending(path: "tmp"), withIntermediateDirectories: true)
  }

  func odr(_ arguments: [String], input: String? = nil, _ extra: [String: String] = [:]) async throws -> Command.Result {
    try await Command.odr(arguments, input: input, environment: environment.merging(extra) { $1 })
  }

  /// Runs odr in `folder`, where an odr.json is that the user adopted
  /// (what it can still not do once adopted is what these tests show).
  func odr(_ arguments: [String], in folder: URL, _ extra: [String: String] = [:]) async throws -> Command.Result {
    var env = environment.merging(extra) { $1 }
    env["ODR_CATALOG"] = nil  // the folder's odr.json says where the catalog is
    _ = try await Command.odr(["trust", "adopt", "--quiet"], environment: env, in: folder)
    return try await Command.odr(arguments, environment: env, in: folder)
  }

  /// Packs an unencrypted APIKeys document `{"Weather": weather}` of
  /// `bundle` into `output`, signed with `key` (exported) when given.
  func publish(_ weather: String, version: Int, bundle: String? = nil, signedBy key: String? = nil, into output: URL? = nil) async throws {
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    try Data("""
      { "bundle": "\(bundle ?? self.bundle)", "tags": {
        "APIKeys": { "category": "prefetch", "secrets": true, "files": ["APIKeys.json"] } } }
      """.utf8).write(to: source.appending(path: "tags.json"))
    try Data(#"{"Weather": "\#(weather)"}"#.utf8).write(to: source.appending(path: "APIKeys.json"))
    let pack = try await odr(["pack", source.path, "--output", (output ?? published).path, "--catalog-version", "\(version)",
                              "--plaintext-secrets", "--quiet"], key.map { ["ODR_SIGNING_KEY": $0] } ?? [:])
    try #require(pack.status == 0, "\(pack.stderr)")
  }

  func lookup(_ service: String? = nil, _ key: String = "Weather") async throws -> String? {
    try await Command.keyringValue(service: service ?? bundle, key: key, environment: environment)
  }

  /// A fresh signing key, exported: (public, secret).
  func signingKey() -> (public: String, secret: String) {
    let key = SigningKey()
    return (key.verifyingKey.description, key.secretKeyString)
  }

  // MARK: High

  /// Round 4, 1: a cloned repository's odr.json pins the attacker's key and
  /// points at the attacker's catalog claiming an app's bundle. Inert until
  /// adopted; adopted, it still never adds a root to a bundle with state;
  /// and the app's own location keeps refusing the attacker's key after.
  @Test func aClonedRepositoryCannotTakeOverAnotherBundle() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let real = signingKey(), attacker = signingKey()
    try await publish(value, version: 1, signedBy: real.secret)
    #expect(try await odr(["fetch", "APIKeys", "--trust", real.public]).status == 0)
    let evil = root.appending(path: "evil")
    try await publish("attacker-value", version: 9, signedBy: attacker.secret, into: evil)
    let project = root.appending(path: "clone")
    try FileManager.default.createDirectory(at: project, withIntermediateDirectories: true)
    try #"{"catalog": "\#(evil.path)", "trust": ["\#(attacker.public)"]}"#.write(to: project.appending(path: "odr.json"), atomically: true, encoding: .utf8)
    var env = environment
    env["ODR_CATALOG"] = nil
    let inert = try await Command.odr(["fetch", "APIKeys"], environment: env, in: project)
    #expect(inert.status == 2 && inert.stderr.contains("is not adopted"), "\(inert.stderr)")
    let adopted = try await odr(["fetch", "APIKeys"], in: project)
    #expect(adopted.status == 4 && adopted.stderr.contains("never adds a trust root"), "\(adopted.stderr)")
    #expect(try await lookup() == value)
    // The app's own location now serving the attacker's catalog: still refused.
    try FileManager.default.removeItem(at: published)
    try await publish("attacker-value", version: 10, signedBy: attacker.secret)
    #expect(try await odr(["fetch", "APIKeys"]).status == 4)
    #expect(try await lookup() == value)
  }

  /// 1, 13: a repository's odr.json names odr's identity service, or an
  /// app's key, as "auth": nothing is sent; plain http to another host is refused.
  @Test func aClonedRepositoryCannotSendKeyringItemsToItsHost() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let made = try await odr(["identity", "new", "laptop-\(suffix)"])
    try #require(made.status == 0, "\(made.stderr)")
    let exported = try await odr(["identity", "export", "laptop-\(suffix)"]).stdout
    let identity = try #require(exported.split(separator: "\n").first { $0.hasPrefix("AGE-SECRET-KEY-") }.map(String.init))
    #expect(try await odr(["set", "Weather", "--service", bundle], input: value).status == 0)
    try await publish("v", version: 1)
    try await TestHTTPServer.serving(files: published) { server in
      let project = root.appending(path: "clone")
      try FileManager.default.createDirectory(at: project, withIntermediateDirectories: true)
      for (service, key, code) in [("odr.identity", "laptop-\(suffix)", Int32(10)), (bundle, "Weather", 10)] {
        try #"{"catalog": "\#(server.url)/", "auth": {"key": "\#(key)", "service": "\#(service)"}}"#
          .write(to: project.appending(path: "odr.json"), atomically: true, encoding: .utf8)
        let status = try await odr(["status"], in: project)
        #expect(status.status == code, "\(status.stderr)")
        #expect(!status.output.contains(identity) && !status.output.contains(value))
      }
      #expect(!server.requests.contains { $0.headers.values.contains { $0.contains(identity) || $0.contains(value) } })
      #expect(server.requests.isEmpty, "\(server.requests.map(\.target))")
      // 13: a marked token still never goes over plain http off this machine.
      try #"{"catalog": "http://catalog.example.invalid/", "auth": {"key": "Weather", "service": "\#(bundle)"}}"#
        .write(to: project.appending(path: "odr.json"), atomically: true, encoding: .utf8)
      let plain = try await odr(["status"], in: project)
      #expect(plain.status == 2, "\(plain.stderr)")
      #expect(plain.stderr.contains("over plain http"), "\(plain.stderr)")
    }
  }

  /// 2: a catalog claiming odr's own services, or a fetch told to write
  /// there, never replaces a private key.
  @Test func aCatalogCannotOverwriteOdrsPrivateKeys() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let made = try await odr(["signing-key", "new", "release-\(suffix)"])
    try #require(made.status == 0, "\(made.stderr)")
    let attacker = SigningKey()
    try await publish("x", version: 1)
    // The attacker's catalog: bundle odr.signing-key, its key as a "value".
    try Data(#"{"release-\#(suffix)": "\#(attacker.secretKeyString)"}"#.utf8).write(to: source.appending(path: "APIKeys.json"))
    let forged = root.appending(path: "forged")
    _ = try await odr(["pack", source.path, "--output", forged.path, "--plaintext-secrets", "--quiet"])
    let catalogFile = forged.appending(path: "catalog.json")
    try String(contentsOf: catalogFile, encoding: .utf8).replacingOccurrences(of: bundle, with: "odr.signing-key")
      .write(to: catalogFile, atomically: true, encoding: .utf8)
    let fetch = try await odr(["fetch", "APIKeys", "--catalog", forged.path])
    #expect(fetch.status != 0)
    #expect(fetch.stderr.contains("reserved"), "\(fetch.stderr)")
    let intoIdentity = try await odr(["fetch", "APIKeys", "--service", "odr.signing-key"])
    #expect(intoIdentity.status == 10, "\(intoIdentity.stderr)")
    #expect(try await odr(["signing-key", "public", "release-\(suffix)"]).stdout == made.stdout)
  }

  /// 3: a location that served a signed catalog of one bundle cannot later
  /// serve an unsigned catalog claiming another.
  @Test func aLocationCannotSwitchBundles() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let key = signingKey()
    try await publish(value, version: 1, signedBy: key.secret)
    #expect(try await odr(["fetch", "APIKeys", "--trust", key.public]).status == 0)
    let evil = "com.odr.redteam.evil\(suffix)"
    try FileManager.default.removeItem(at: published)
    try await publish("stolen", version: 1, bundle: evil)
    let exec = try await odr(["exec", "--fetch", "APIKeys", "--", "/bin/sh", "-c", "echo $Weather"])
    #expect(exec.status == 4, "\(exec.stderr)")
    #expect(exec.stderr.contains("served catalogs of \(bundle) before"), "\(exec.stderr)")
    #expect(!exec.stdout.contains("stolen"))
  }

  /// 4: a pin replaces what the bundle's state trusted before (a first use,
  /// or another project's pin).
  @Test func aPinExcludesEarlierSigners() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let other = signingKey(), real = signingKey()
    try await publish("other", version: 1, signedBy: other.secret)
    #expect(try await odr(["fetch", "APIKeys"]).status == 0)  // trusted on first use
    try await publish("other-2", version: 2, signedBy: other.secret)
    let pinned = try await odr(["fetch", "APIKeys", "--trust", real.public])
    #expect(pinned.status == 4, "\(pinned.stderr)")
    #expect(try await lookup() == "other")
    // The real publisher's catalog (its own folder history: no chain from `other`).
    try FileManager.default.removeItem(at: published)
    try await publish(value, version: 2, signedBy: real.secret)
    let good = try await odr(["fetch", "APIKeys", "--trust", real.public])
    #expect(good.status == 0, "\(good.stderr)")
    #expect(try await lookup() == value)
  }

  /// A catalog's bundle id names folders: one claiming "catalogs.json" on a
  /// fresh machine must not take the place of the catalog index (every
  /// other bundle would then fail on an unreadable index).
  @Test func aBundleIdCannotTakeTheIndexsPlace() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let hostile = root.appending(path: "hostile")
    try await publish("x", version: 1, bundle: "catalogs.json", into: hostile)
    #expect(try await odr(["fetch", "APIKeys", "--catalog", hostile.path, "--service", bundle]).status == 0)
    try await publish(value, version: 1)
    let fetch = try await odr(["fetch", "APIKeys"])
    #expect(fetch.status == 0, "\(fetch.stderr)")
    #expect(try await lookup() == value)
  }

  // MARK: Medium

  /// 5: the kept catalog is re-verified on a 304 and offline: a cache
  /// rewritten by someone else decides nothing.
  @Test func aRewrittenCacheIsCheckedAgainOn304AndOffline() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let key = signingKey()
    try await publish(value, version: 1, signedBy: key.secret)
    let nginx = try await Nginx.start(root: published)
    defer { nginx.stop() }
    let online = ["ODR_CATALOG": nginx.url.absoluteString, "ODR_TRUST": key.public]
    #expect(try await odr(["fetch", "APIKeys"], online).status == 0)
    // The attacker's catalog, unsigned, its blobs added to the cache's store.
    let evil = root.appending(path: "evil")
    try await publish("stolen", version: 1, into: evil)
    let store = cache.appending(path: "odr/\(bundle)")
    try? FileManager.default.removeItem(at: store.appending(path: "catalog.json.sig"))  // (an older odr kept none)
    try FileManager.default.removeItem(at: store.appending(path: "catalog.json"))
    try FileManager.default.copyItem(at: evil.appending(path: "catalog.json"), to: store.appending(path: "catalog.json"))
    // Its blobs in the store, and (unreferenced by the real catalog) on the host.
    for folder in [store, published] {
      #expect(try await Command.run("/bin/sh", ["-c", "cp \"$0\"/blobs/* \"$1\"/blobs/", evil.path, folder.path]).status == 0)
    }
    let revalidated = try await odr(["fetch", "APIKeys"], online)
    #expect(revalidated.status == 0, "\(revalidated.stderr)")
    #expect(try await lookup() == value)
    // Offline, the same rewrite is refused (with the real key pinned, and
    // with a pin added after an unsigned catalog was kept).
    try? FileManager.default.removeItem(at: store.appending(path: "catalog.json.sig"))
    try FileManager.default.removeItem(at: store.appending(path: "catalog.json"))
    try FileManager.default.copyItem(at: evil.appending(path: "catalog.json"), to: store.appending(path: "catalog.json"))
    let offline = try await odr(["fetch", "APIKeys", "--offline"], online)
    #expect(offline.status == 4, "\(offline.stderr)")
    #expect(try await lookup() == value)
  }

  /// 5 (second half): a pin added later is checked against the kept catalog.
  @Test func aPinAddedLaterRefusesAKeptUnsignedCatalog() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await publish(value, version: 1)
    #expect(try await odr(["fetch", "APIKeys"]).status == 0)
    let late = try await odr(["fetch", "APIKeys", "--offline", "--trust", signingKey().public])
    #expect(late.status == 4, "\(late.stderr)")
    #expect(late.stderr.contains("not signed"), "\(late.stderr)")
  }

  /// 6: on first use, a signature line a host added with its own key over
  /// the genuine bytes is not what gets trusted.
  @Test func firstUseTrustsOnlyASignerTheCatalogLists() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let key = signingKey()
    try await publish(value, version: 1, signedBy: key.secret)
    let host = SigningKey()
    let catalogBytes = try Data(contentsOf: published.appending(path: "catalog.json"))
    let sigFile = published.appending(path: "catalog.json.sig")
    let genuine = try Data(contentsOf: sigFile)
    // The host signs the genuine bytes in the form of the catalog's format.
    let format = (try JSONSerialization.jsonObject(with: catalogBytes) as? [String: Any])?["formatVersion"] as? Int
    func hostSignature() throws -> CatalogSignature {
      try CatalogSignature(signing: catalogBytes, with: [host], format: format ?? 1)
    }
    try (hostSignature().encoded + genuine).write(to: sigFile)
    let fetch = try await odr(["fetch", "APIKeys"])
    #expect(fetch.status == 0, "\(fetch.stderr)")
    #expect(fetch.stderr.contains("trusting \(key.public)"), "\(fetch.stderr)")
    let show = try await odr(["trust", "show", bundle, "--json"])
    #expect(show.stdout.contains(key.public) && !show.stdout.contains(host.verifyingKey.description), "\(show.stdout)")
    // A catalog signed only by the host's key is refused on first use.
    try FileManager.default.removeItem(at: state)
    try hostSignature().encoded.write(to: sigFile)
    let hostOnly = try await odr(["fetch", "APIKeys"])
    #expect(hostOnly.status == 4, "\(hostOnly.stderr)")
    #expect(hostOnly.stderr.contains("does not list in its signers"), "\(hostOnly.stderr)")
  }

  /// 7: a signed catalog claiming this bundle with a huge version, signed by
  /// a key another project trusts, does not raise this project's floor.
  @Test func aForeignSignerCannotLockABundleOut() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let foreign = signingKey(), real = signingKey()
    let elsewhere = root.appending(path: "elsewhere")
    try await publish("foreign", version: 1 << 40, signedBy: foreign.secret, into: elsewhere)
    #expect(try await odr(["fetch", "APIKeys", "--catalog", elsewhere.path, "--trust", foreign.public]).status == 0)
    try await publish(value, version: 3, signedBy: real.secret)
    let fetch = try await odr(["fetch", "APIKeys", "--trust", real.public])
    #expect(fetch.status == 0, "\(fetch.stderr)")
    #expect(try await lookup() == value)
  }

  /// 8: damaged trust state (garbage, truncated, a later format) is an
  /// error naming the file and `odr trust reset`, and is left as it was.
  @Test(arguments: ["garbage", "truncated", "later"])
  func damagedTrustStateFailsClosed(_ damage: String) async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let key = signingKey()
    try await publish(value, version: 2, signedBy: key.secret)
    #expect(try await odr(["fetch", "APIKeys"]).status == 0)
    let file = state.appending(path: "odr/\(bundle)/trust.json")
    let good = try Data(contentsOf: file)
    let damaged = switch damage {
    case "garbage": Data("\u{1}\u{2}not json".utf8)
    case "truncated": good.prefix(good.count / 2)
    default: Data(String(decoding: good, as: UTF8.self).replacingOccurrences(of: "\"format\" : 2", with: "\"format\" : 3").utf8)
    }
    try damaged.write(to: file)
    try FileManager.default.removeItem(at: published)  // a host serving an older, unsigned catalog
    try await publish("unsigned", version: 1)
    let fetch = try await odr(["fetch", "APIKeys"])
    #expect(fetch.status == 4, "\(fetch.stderr)")
    #expect(fetch.stderr.contains(file.path) && fetch.stderr.contains("odr trust reset \(bundle)"), "\(fetch.stderr)")
    #expect(try Data(contentsOf: file) == damaged)
    #expect(try await lookup() == value)
    #expect(try await odr(["trust", "reset", bundle]).status == 0)
    #expect(try await odr(["fetch", "APIKeys"]).status == 0)
    #expect(try await lookup() == "unsigned")
  }

  /// 8 (the same rule for the store's files): damaged pins, usage or the
  /// catalog index are errors naming the file, never read as empty (a purge
  /// would remove pinned files; a lost index would hide the kept catalog).
  @Test(arguments: ["pins.json", "usage.json", "_catalogs.json"])
  func damagedStoreStateFailsClosed(_ name: String) async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try FileManager.default.createDirectory(at: source.appending(path: "levels"), withIntermediateDirectories: true)
    try Data("level".utf8).write(to: source.appending(path: "levels/1.txt"))
    try Data(#"{"bundle": "\#(bundle)", "tags": {"L": {"category": "onDemand", "files": ["levels/"]}}}"#.utf8)
      .write(to: source.appending(path: "tags.json"))
    #expect(try await odr(["pack", source.path, "--output", published.path, "--quiet"]).status == 0)
    #expect(try await odr(["begin", "L", "--quiet"]).status == 0)
    #expect(try await odr(["priority", "L", "0.3"]).status == 0)
    let file = name == "_catalogs.json" ? cache.appending(path: "odr/_catalogs.json") : cache.appending(path: "odr/\(bundle)/\(name)")
    try #require(FileManager.default.fileExists(atPath: file.path))
    try Data("{ damaged".utf8).write(to: file)
    let blobs = try FileManager.default.contentsOfDirectory(atPath: cache.appending(path: "odr/\(bundle)/blobs").path)
    let command = name == "_catalogs.json" ? ["status", "--offline"] : name == "pins.json" ? ["purge", "--all"] : ["status"]
    let result = try await odr(command)
    #expect(result.status == 4, "\(command): \(result.stderr)")
    #expect(result.stderr.contains(file.path), "\(result.stderr)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: cache.appending(path: "odr/\(bundle)/blobs").path) == blobs)
    #expect(try Data(contentsOf: file) == Data("{ damaged".utf8))
  }

  /// 9: a stale or tampered mirror is skipped like a failing one.
  @Test(arguments: ["stale", "tampered"])
  func aBadMirrorIsSkipped(_ how: String) async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let key = signingKey()
    let first = root.appending(path: "mirror-a"), second = root.appending(path: "mirror-b")
    try await publish(value, version: 2, signedBy: key.secret, into: first)
    try await publish(value, version: 2, signedBy: key.secret, into: second)
    let mirrors = ["--catalog", first.path, "--catalog", second.path, "--trust", key.public]
    #expect(try await odr(["fetch", "APIKeys"] + mirrors).status == 0)
    try FileManager.default.removeItem(at: first)
    if how == "stale" {
      try await publish("old", version: 1, signedBy: key.secret, into: first)
    } else {
      try await publish("tampered", version: 3, signedBy: key.secret, into: first)
      let catalogFile = first.appending(path: "catalog.json")
      try String(contentsOf: catalogFile, encoding: .utf8).replacingOccurrences(of: "\"version\" : 3", with: "\"version\" : 4")
        .write(to: catalogFile, atomically: true, encoding: .utf8)
    }
    let fetch = try await odr(["fetch", "APIKeys"] + mirrors)
    #expect(fetch.status == 0, "\(fetch.stderr)")
    #expect(fetch.stderr.contains("skipping it"), "\(fetch.stderr)")
    #expect(try await lookup() == value)
  }

  /// 10: `odr exec` never hands ODR_IDENTITY or ODR_SIGNING_KEY to the child.
  @Test(arguments: [[], ["--mask"], ["--pristine"]])
  func execWithholdsOdrsPrivateKeys(_ flags: [String]) async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    #expect(try await odr(["set", "Weather", "--service", bundle], input: value).status == 0)
    let identity = AgeIdentity().secretKeyString, signing = SigningKey().secretKeyString
    let exec = try await odr(["exec", "--service", bundle] + flags + ["--", "/usr/bin/env"], ["ODR_IDENTITY": identity, "ODR_SIGNING_KEY": signing])
    #expect(exec.status == 0, "\(exec.stderr)")
    #expect(exec.stdout.contains("WEATHER="), "\(exec.stdout)")
    // Only their names reach the child, in ODR_WITHHELD (so a nested odr can say why it has no identity).
    #expect(!exec.stdout.contains("ODR_IDENTITY=") && !exec.stdout.contains("ODR_SIGNING_KEY="))
    #expect(exec.stdout.contains("ODR_WITHHELD=ODR_IDENTITY,ODR_SIGNING_KEY\n"), "\(exec.stdout)")
    #expect(!exec.output.contains(identity) && !exec.output.contains(signing))
  }

  /// 11: private keys are not ordinary keys to get, env, read, templates
  /// and dotenv references.
  @Test func privateKeysAreUnreachableFromKeyCommands() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let name = "laptop-\(suffix)"
    #expect(try await odr(["identity", "new", name]).status == 0)
    let exported = try await odr(["identity", "export", name]).stdout
    let secret = try #require(exported.split(separator: "\n").first { $0.hasPrefix("AGE-SECRET-KEY-") }.map(String.init))
    let template = root.appending(path: "t.txt"), dotenv = root.appending(path: ".env")
    try "k={{ odr://odr.identity/\(name) }}\n".write(to: template, atomically: true, encoding: .utf8)
    try "K=odr://odr.identity/\(name)\n".write(to: dotenv, atomically: true, encoding: .utf8)
    for arguments in [["get", name, "--service", "odr.identity"], ["env", "--service", "odr.identity"], ["list", "--service", "odr.identity"],
                      ["read", "odr://odr.identity/\(name)"], ["inject", "-i", template.path],
                      ["exec", "--env-file", dotenv.path, "--", "/usr/bin/env"], ["set", "x", "--service", "odr.signing-key"],
                      ["delete", name, "--service", "odr.identity"]] {
      let result = try await odr(arguments, input: "v")
      #expect(result.status == 10, "\(arguments): \(result.stderr)")
      #expect(!result.output.contains(secret), "\(arguments)")
    }
    #expect(try await odr(["identity", "recipient", name]).status == 0)
  }

  /// 12: errors about a malformed public key never quote a private key.
  @Test func errorsNeverQuoteAPrivateKey() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await publish(value, version: 1)
    let ageKey = AgeIdentity().secretKeyString, signing = SigningKey().secretKeyString
    let keyFile = root.appending(path: "key.txt")
    #expect(try await Command.run("/usr/bin/age-keygen", ["-o", keyFile.path]).status == 0)
    let keygenSecret = try String(contentsOf: keyFile, encoding: .utf8).split(separator: "\n").first { $0.hasPrefix("AGE-SECRET-KEY-") }.map(String.init) ?? "?"
    let project = root.appending(path: "project")
    try FileManager.default.createDirectory(at: project, withIntermediateDirectories: true)
    try #"{"trust": ["\#(signing)"]}"#.write(to: project.appending(path: "odr.json"), atomically: true, encoding: .utf8)
    let out = root.appending(path: "out").path
    let attempts: [(arguments: [String], extra: [String: String])] = [
      (["pack", source.path, "-o", out, "--recipient", ageKey], [:]),
      (["pack", source.path, "-o", out, "--recipients-file", keyFile.path], [:]),
      (["pack", source.path, "-o", out, "--next-signer", signing], ["ODR_SIGNING_KEY": SigningKey().secretKeyString]),
      (["status", "--trust", signing], [:]),
      (["status"], ["ODR_TRUST": signing]),
      (["status", "--trust", String(signing.dropFirst(15))], [:]),
    ]
    for (arguments, extra) in attempts {
      let result = try await odr(arguments, extra)
      #expect(result.status == 2, "\(arguments): \(result.stderr)")
      for secret in [ageKey, signing, keygenSecret, String(signing.dropFirst(15))] {
        #expect(!result.output.contains(secret.prefix(30)), "\(arguments): \(result.stderr)")
      }
    }
    let fromConfig = try await odr(["status"], in: project)
    #expect(fromConfig.status == 2)
    #expect(!fromConfig.output.contains(signing.dropFirst(15).prefix(30)), "\(fromConfig.stderr)")
  }

  // MARK: Low

  /// 14: an error body echoing the request's credential is not quoted.
  @Test func catalogErrorsNeverQuoteTheCredential() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let token = "Tok\(UUID().uuidString.replacingOccurrences(of: "-", with: ""))"
    try await TestHTTPServer.answering({ request in
      let sent = request.headers["authorization"]?.replacingOccurrences(of: "Bearer ", with: "") ?? ""
      return .text("<Error><Code>\(sent)</Code></Error>", status: 403)
    }) { server in
      #expect(try await odr(["set", "CatalogToken", "--service", bundle, "--catalog-token-for", server.url], input: token).status == 0)
      let project = root.appending(path: "project")
      try FileManager.default.createDirectory(at: project, withIntermediateDirectories: true)
      try #"{"catalog": "\#(server.url)/", "auth": {"key": "CatalogToken", "service": "\#(bundle)"}}"#
        .write(to: project.appending(path: "odr.json"), atomically: true, encoding: .utf8)
      let status = try await odr(["status"], in: project)
      #expect(status.status == 10, "\(status.stderr)")
      #expect(server.requests.contains { $0.headers["authorization"] == "Bearer \(token)" })
      #expect(!status.output.contains(token), "\(status.stderr)")
    }
  }

  /// 15: odr runs with a core limit of 0 and non-dumpable; the command
  /// `odr exec` starts gets the user's limit back.
  @Test func odrWritesNoCoreFile() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    #expect(try await odr(["set", "Weather", "--service", bundle], input: value).status == 0)
    // odr lowers its own limit again right after starting the child: the
    // child waits for that (a bounded loop on the condition), then reads it.
    let child = "ulimit -S -c; for i in $(seq 2000); do grep -q 'Max core file size *0 ' /proc/$PPID/limits && break; done; grep 'Max core' /proc/$PPID/limits"
    let script = "ulimit -S -c \"$(ulimit -H -c)\"; ulimit -H -c; exec \"$0\" exec --mask --service \(bundle) -- /bin/sh -c \"$1\""
    let result = try await Command.run("/bin/sh", ["-c", script, Paths.odr.path, child], environment: environment)
    #expect(result.status == 0, "\(result.stderr)")
    let lines = result.stdout.split(separator: "\n")
    try #require(lines.count == 3, "\(result.stdout)")
    #expect(lines[1] == lines[0], "\(result.stdout)")  // the child's: the user's again
    #expect(lines[2].split(separator: " ").dropFirst(4).first == "0", "\(result.stdout)")  // odr's soft limit
  }

  /// 16: export on a terminal asks for --force or a pipe.
  @Test func exportOnATerminalAsksForForce() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    #expect(try await odr(["identity", "new", "tty-\(suffix)"]).status == 0)
    let onTTY = try await Command.run("/usr/bin/script", ["-qec", "\(Paths.odr.path) identity export tty-\(suffix)", "/dev/null"], environment: environment)
    #expect(onTTY.stdout.contains("--force"), "\(onTTY.stdout)")
    #expect(!onTTY.stdout.contains("AGE-SECRET-KEY-"))
    let forced = try await Command.run("/usr/bin/script", ["-qec", "\(Paths.odr.path) identity export tty-\(suffix) --force", "/dev/null"], environment: environment)
    #expect(forced.stdout.contains("AGE-SECRET-KEY-"))
    #expect(try await odr(["identity", "export", "tty-\(suffix)"]).stdout.contains("\nAGE-SECRET-KEY-"))
    #expect(try await odr(["identity", "delete", "tty-\(suffix)"]).status == 0)
  }

  /// 17: a header value with CR/LF is refused, not silently dropped.
  @Test func aHeaderWithALineBreakIsRefused() async throws {
    let result = try await odr(["http", "GET", "http://127.0.0.1:9/", "-H", "X-Test: a\r\nInjected: b"])
    #expect(result.status == 2, "\(result.stderr)")
    #expect(result.stderr.contains("line break"), "\(result.stderr)")
  }

  /// 20: a catalog trickled one byte at a time does not keep odr waiting
  /// past the transfer deadline (4 × --network-timeout), though it never stalls.
  @Test func aTrickledCatalogHitsTheDeadline() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await publish(value, version: 1)
    try await TestHTTPServer.serving(files: published) { server in
      server.setFault(.slow(chunk: 1, pause: .milliseconds(100)), forPathEndingWith: "catalog.json")
      let result = try await odr(["status", "--catalog", server.url + "/", "--network-timeout", "1"])
      #expect(result.status == 7, "\(result.stderr)")
      #expect(result.stderr.contains("in all"), "\(result.stderr)")
      // odr's own run time (not the test's, which includes waiting for a
      // child slot in a loaded suite): the deadline is 4 s; without it ~40 s
      // (one byte per 100 ms).
      #expect(result.duration < .seconds(12), "\(result.duration)")
    }
  }
}
