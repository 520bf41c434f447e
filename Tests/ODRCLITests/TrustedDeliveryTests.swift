import Foundation
import ODRAge
import ODRCatalog
import ODRCLITesting
import ODRTesting
import ODRSigning
import Testing

/// Signed catalogs, encrypted secrets packs and no plaintext at rest, end
/// to end: the built `odr`, the real keyring, the stock `age` tool.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct TrustedDeliveryTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-trust-\(UUID().uuidString)")
  let bundle = "com.odr.trust.\(UUID().uuidString.prefix(8).lowercased())"
  let value = "tk-\(UUID().uuidString)"
  let suffix = UUID().uuidString.prefix(8).lowercased()
  var source: URL { root.appending(path: "src") }
  var published: URL { root.appending(path: "pub") }
  var cache: URL { root.appending(path: "cache") }
  var environment: [String: String] {
    var env = KeyringSession.shared.environment
    env["XDG_CACHE_HOME"] = cache.path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    env["TMPDIR"] = root.appending(path: "tmp").path
    env["ODR_CATALOG"] = "file://" + published.path
    for name in ["ODR_SERVICE", "ODR_IDENTITY", "ODR_TRUST", "ODR_SIGNING_KEY"] { env[name] = nil }
    return env
  }

  init() throws {
    try FileManager.default.createDirectory(at: root.appending(path: "tmp"), withIntermediateDirectories: true)
  }

  func odr(_ arguments: [String], input: String? = nil, _ extra: [String: String] = [:]) async throws -> Command.Result {
    try await Command.odr(arguments, input: input, environment: environment.merging(extra) { $1 })
  }

  /// A signing key made in the keyring and exported: (public, secret).
  func signingKey(_ name: String, _ more: [String] = []) async throws -> (public: String, secret: String) {
    let made = try await odr(["signing-key", "new", "\(name)-\(suffix)"] + more)
    try #require(made.status == 0, "\(made.stderr)")
    let secret = try await odr(["signing-key", "export", "\(name)-\(suffix)"]).stdout
    return (made.stdout.trimmingCharacters(in: .newlines), secret.trimmingCharacters(in: .newlines))
  }

  /// An identity made in the keyring: its recipient.
  func identity(_ name: String) async throws -> String {
    let made = try await odr(["identity", "new", "\(name)-\(suffix)"])
    try #require(made.status == 0, "\(made.stderr)")
    return made.stdout.trimmingCharacters(in: .newlines)
  }

  /// Publishes an APIKeys document (and a plain Onboarding tag).
  func publish(_ weather: String, version: Int, signedBy key: String? = nil, recipients: [String], _ more: [String] = []) async throws {
    try FileManager.default.createDirectory(at: source.appending(path: "Onboarding"), withIntermediateDirectories: true)
    try Data("""
      { "bundle": "\(bundle)", "tags": {
        "APIKeys": { "category": "prefetch", "secrets": true, "files": ["APIKeys.json"] },
        "Onboarding": { "category": "initial", "files": ["Onboarding/"] } } }
      """.utf8).write(to: source.appending(path: "tags.json"))
    try Data(#"{"Weather": "\#(weather)"}"#.utf8).write(to: source.appending(path: "APIKeys.json"))
    try Data("welcome".utf8).write(to: source.appending(path: "Onboarding/welcome.txt"))
    let pack = try await odr(["pack", source.path, "--output", published.path, "--catalog-version", "\(version)", "--quiet"]
                       + recipients.flatMap { ["--recipient", $0] } + more, key.map { ["ODR_SIGNING_KEY": $0] } ?? [:])
    try #require(pack.status == 0, "\(pack.stderr)")
  }

  func lookup() async throws -> String? {
    try await Command.keyringValue(service: bundle, key: "Weather", environment: environment)
  }

  var apiKeysBlob: URL {
    get throws { try PublishedFiles.blob(of: "APIKeys", in: published) }
  }

  @Test func signedEncryptedFetchImportsAndOnlyTheIdentityReadsTheBlob() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let key = try await signingKey("release")
    let recipient = try await identity("laptop")
    try await publish(value, version: 1, signedBy: key.secret, recipients: [recipient])
    #expect(PublishedFiles.containing([value], under: published).isEmpty)

    let fetch = try await odr(["fetch", "APIKeys", "--trust", key.public])
    #expect(fetch.status == 0, "\(fetch.stderr)")
    #expect(try await lookup() == value)

    // The stock age tool: the exported identity opens the blob, another does not.
    let exported = root.appending(path: "exported.txt")
    try Data(try await odr(["identity", "export", "laptop-\(suffix)"]).stdout.utf8).write(to: exported)
    let opened = try await Command.run("/usr/bin/age", ["-d", "-i", exported.path, try apiKeysBlob.path])
    #expect(opened.status == 0)
    #expect(opened.stdout.contains(value))
    let other = root.appending(path: "other.txt")
    try Data(AgeIdentity().fileText.utf8).write(to: other)
    #expect(try await Command.run("/usr/bin/age", ["-d", "-i", other.path, try apiKeysBlob.path]).status != 0)
    #expect(try await odr(["identity", "recipient", "laptop-\(suffix)"]).stdout == recipient + "\n")
    #expect(try await odr(["verify", published.path, "--trust", key.public, "--min-validity", "30d"]).status == 0)
  }

  @Test func anAgeKeygenIdentityInODRIdentityOpensThePack() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let file = root.appending(path: "ci.txt")
    #expect(try await Command.run("/usr/bin/age-keygen", ["-o", file.path]).status == 0)
    let recipient = try await Command.run("/usr/bin/age-keygen", ["-y", file.path]).stdout.trimmingCharacters(in: .newlines)
    try await publish(value, version: 1, recipients: [recipient])
    let ciEnv = ["ODR_IDENTITY": try String(contentsOf: file, encoding: .utf8), "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"]
    let exec = try await odr(["exec", "--fetch", "APIKeys", "--", "/bin/sh", "-c", "test \"$WEATHER\" = \(value)"], ciEnv)
    #expect(exec.status == 0, "\(exec.stderr)")
    let fromFile = try await odr(["fetch", "APIKeys", "--identity-file", file.path])
    #expect(fromFile.status == 0, "\(fromFile.stderr)")
    #expect(try await lookup() == value)
  }

  @Test func postQuantumAndSSHRecipientsOpenTheirPacksAndMixingIsRefused() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let made = try await odr(["identity", "new", "pq-\(suffix)", "--pq"])
    #expect(made.status == 0 && made.stdout.hasPrefix("age1pq1"), "\(made.stderr)")
    #expect(made.stderr.contains("created post-quantum ML-KEM-768 + X25519 identity 'pq-\(suffix)'"))
    let pq = made.stdout.trimmingCharacters(in: .newlines)
    try await publish(value, version: 1, recipients: [pq])
    let fetch = try await odr(["fetch", "APIKeys"])
    #expect(fetch.status == 0, "\(fetch.stderr)")
    #expect(try await lookup() == value)

    // A classic recipient beside a post-quantum one: refused, nothing written.
    let before = try Data(contentsOf: published.appending(path: "catalog.json"))
    let mixed = try await odr(["pack", source.path, "--output", published.path, "--catalog-version", "2", "--recipient", pq,
                               "--recipient", AgeIdentity().recipient.description])
    #expect(mixed.status != 0 && mixed.stderr.contains("gives up the post-quantum protection"), "\(mixed.stderr)")
    #expect(try Data(contentsOf: published.appending(path: "catalog.json")) == before)

    // SSH keys from an authorized_keys-style file; a private key in ODR_IDENTITY, no keyring.
    let keys = root.appending(path: "authorized_keys")
    var lines = "# deploy\n"
    for type in ["ed25519", "rsa"] {
      let key = root.appending(path: "id_\(type)")
      // 2048-bit RSA, the smallest age accepts: ssh-keygen's default 3072 costs three times the CPU.
      #expect(try await Command.run("/usr/bin/ssh-keygen", ["-q", "-t", type, "-b", type == "rsa" ? "2048" : "256", "-N", "", "-f", key.path]).status == 0)
      lines += (type == "ed25519" ? "restrict " : "") + (try String(contentsOf: key.appendingPathExtension("pub"), encoding: .utf8))
    }
    try Data(lines.utf8).write(to: keys)
    let pack = try await odr(["pack", source.path, "--output", published.path, "--catalog-version", "2", "--recipients-file", keys.path])
    #expect(pack.status == 0 && pack.stderr.contains("authorized_keys options skipped on line 2"), "\(pack.stderr)")
    for type in ["ed25519", "rsa"] {
      let ciEnv = ["ODR_IDENTITY": try String(contentsOf: root.appending(path: "id_\(type)"), encoding: .utf8), "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"]
      let exec = try await odr(["exec", "--fetch", "APIKeys", "--", "/bin/sh", "-c", "test \"$WEATHER\" = \(value)"], ciEnv)
      #expect(exec.status == 0 && exec.stderr.isEmpty, "\(type): \(exec.stderr)")
    }
    // An identity that is none of the recipients: the message names its recipient.
    let stranger = AgeIdentity()
    let wrong = try await odr(["exec", "--fetch", "APIKeys", "--", "/bin/true"],
                              ["ODR_IDENTITY": stranger.secretKeyString, "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"])
    #expect(wrong.status != 0 && wrong.stderr.contains("(its recipient: \(stranger.recipient))"), "\(wrong.stderr)")
  }

  @Test func aMachineThatIsNotARecipientExitsTenAndChangesNothing() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let mine = try await identity("mine")
    try await publish(value, version: 1, recipients: [mine])
    #expect(try await odr(["fetch", "APIKeys"]).status == 0)
    try await publish(value + "-2", version: 2, recipients: [AgeIdentity().recipient.description])
    let result = try await odr(["fetch", "APIKeys"])
    #expect(result.status == 10)
    // It imported keys before: removed, not new; its keys stay, and it is told so.
    #expect(result.stderr.contains("APIKeys (catalog version 2 of \(bundle)) is no longer encrypted to this machine"), "\(result.stderr)")
    #expect(result.stderr.contains("add its recipient back") && !result.stderr.contains("odr identity new"))
    #expect(try await lookup() == value)
    // In memory only (no keyring, no earlier import): how to become a recipient.
    let exec = try await odr(["exec", "--fetch", "APIKeys", "--", "/bin/true"], ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"])
    #expect(exec.status == 10 && exec.stderr.contains("odr identity new"), "\(exec.stderr)")
  }

  @Test func aFlippedByteInTheCatalogOrItsSignatureIsRefusedBeforeAnythingIsWritten() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let key = try await signingKey("flip")
    let recipient = try await identity("flip")
    try await publish(value, version: 1, signedBy: key.secret, recipients: [recipient])
    #expect(try await odr(["fetch", "APIKeys", "--trust", key.public]).status == 0)
    try await publish(value + "-2", version: 2, signedBy: key.secret, recipients: [recipient])
    let cached = try Data(contentsOf: cache.appending(path: "odr/\(bundle)/catalog.json"))
    for name in ["catalog.json", "catalog.json.sig"] {
      let file = published.appending(path: name)
      let original = try Data(contentsOf: file)
      for index in Set([0, 1, original.count / 4, original.count / 2, original.count * 3 / 4, original.count - 2]) {
        var tampered = original
        tampered[index] ^= 0x04
        try tampered.write(to: file)
        for trust in [["--trust", key.public], []] {
          let result = try await odr(["fetch", "APIKeys"] + trust)
          #expect(result.status == 4, "\(name)[\(index)] \(trust): \(result.stderr)")
        }
        #expect(try await lookup() == value)
        #expect(try Data(contentsOf: cache.appending(path: "odr/\(bundle)/catalog.json")) == cached)
      }
      try original.write(to: file)
    }
    #expect(try await odr(["fetch", "APIKeys", "--trust", key.public]).status == 0)
    #expect(try await lookup() == value + "-2")
  }

  @Test func aMissingSignatureAfterASignedVersionIsRefused() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let key = try await signingKey("downgrade")
    let recipient = try await identity("downgrade")
    try await publish(value, version: 1, signedBy: key.secret, recipients: [recipient])
    let first = try await odr(["fetch", "APIKeys"])
    #expect(first.status == 0)
    #expect(first.stderr.contains("trusting \(key.public) for \(bundle) on first use"))
    try await publish(value + "-2", version: 2, recipients: [recipient])
    #expect(!FileManager.default.fileExists(atPath: published.appending(path: "catalog.json.sig").path))
    let result = try await odr(["fetch", "APIKeys"])
    #expect(result.status == 4)
    #expect(result.stderr.contains("downgrade"))
    #expect(result.stderr.contains("odr trust reset \(bundle)"), "a folder: \(result.stderr)")
    #expect(try await lookup() == value)
    // The way out it offers for a trial: a bundle id of its own.
    let trial = root.appending(path: "trial")
    #expect(try await odr(["pack", source.path, "--output", trial.path, "--bundle", "\(bundle).trial", "--plaintext-secrets", "--quiet"]).status == 0)
    let begun = try await odr(["begin", "Onboarding", "--catalog", trial.path])
    #expect(begun.status == 0, "\(begun.stderr)")
    #expect(try Catalog.decode(Data(contentsOf: trial.appending(path: "catalog.json"))).bundle == "\(bundle).trial")
    // Deleting the cache does not reset trust: it lives in the state folder.
    try FileManager.default.removeItem(at: cache)
    #expect(try await odr(["fetch", "APIKeys"]).status == 4)
  }

  @Test func anUntrustedKeyIsRefused() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let (pinned, other) = (try await signingKey("pinned"), try await signingKey("other"))
    try await publish(value, version: 1, signedBy: other.secret, recipients: [try await identity("untrusted")])
    let result = try await odr(["fetch", "APIKeys"], ["ODR_TRUST": pinned.public])
    #expect(result.status == 4)
    #expect(result.stderr.contains("signed by \(other.public), which is not trusted"))
    #expect(try await lookup() == nil)
  }

  @Test func anExpiredCatalogIsRefusedOnlineAndServedOfflineWithAWarning() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let key = try await signingKey("expiry")
    try await publish(value, version: 1, signedBy: key.secret, recipients: [try await identity("expiry")])
    #expect(try await odr(["fetch", "APIKeys"]).status == 0)
    // The publisher's catalog, re-signed with an expiry in the past.
    let file = published.appending(path: "catalog.json")
    let text = try String(contentsOf: file, encoding: .utf8)
    let expired = Data(text.replacing(/"expires" : "[^"]*"/, with: #""expires" : "2001-01-01T00:00:00Z""#).utf8)
    try expired.write(to: file)
    try CatalogSignature(signing: expired, with: try SigningKey(key.secret)).encoded.write(to: published.appending(path: "catalog.json.sig"))
    let online = try await odr(["fetch", "APIKeys"])
    #expect(online.status == 4)
    #expect(online.stderr.contains("expired on 2001-01-01"))
    let verify = try await odr(["verify", published.path])
    #expect(verify.status == 4)
    #expect(verify.stdout.contains("re-sign it with the next version (odr pack --sign … --catalog-version 2 --expires 90d)"), "\(verify.stdout)")
    // Time passes for the copy on disk too (the kept copy is the signed
    // catalog that has now expired): offline serves it with a warning.
    let stored = cache.appending(path: "odr/\(bundle)")
    try expired.write(to: stored.appending(path: "catalog.json"))
    try Data(contentsOf: published.appending(path: "catalog.json.sig")).write(to: stored.appending(path: "catalog.json.sig"))
    let offline = try await odr(["fetch", "APIKeys", "--offline"])
    #expect(offline.status == 0, "\(offline.stderr)")
    #expect(offline.stderr.contains("warning: the catalog of \(bundle) (version 1) expired"))
  }

  @Test func aRotationChainIsFollowedAndAnUnlistedKeyRefused() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let (k1, k2, k3) = (try await signingKey("k1"), try await signingKey("k2"), try await signingKey("k3"))
    let recipient = try await identity("rotation")
    try await publish(value, version: 1, signedBy: k1.secret, recipients: [recipient], ["--next-signer", k2.public])
    let first = try await odr(["fetch", "APIKeys", "--trust", k1.public])
    #expect(first.status == 0, "\(first.stderr)")
    try await publish(value + "-2", version: 2, signedBy: k2.secret, recipients: [recipient])
    let handedOver = try await odr(["fetch", "APIKeys"])
    #expect(handedOver.status == 0, "\(handedOver.stderr)")
    #expect(try await lookup() == value + "-2")
    // A key no catalog handed over to: odr pack refuses it (nothing written)…
    let unlisted = try await odr(["pack", source.path, "--output", published.path, "--catalog-version", "3", "--quiet", "--recipient", recipient],
                                 ["ODR_SIGNING_KEY": k3.secret])
    #expect(unlisted.status == 4, "\(unlisted.stderr)")
    // …and clients refuse it when the publisher insists (a new trust root).
    try await publish(value + "-3", version: 3, signedBy: k3.secret, recipients: [recipient], ["--new-trust-root"])
    let refused = try await odr(["fetch", "APIKeys"])
    #expect(refused.status == 4)
    #expect(refused.stderr.contains("not trusted"))
    try await publish(value + "-3", version: 3, signedBy: k1.secret, recipients: [recipient], ["--new-trust-root"])
    #expect(try await odr(["fetch", "APIKeys"]).status == 4)  // K1 handed over to K2
    #expect(try await lookup() == value + "-2")
  }

  @Test func oversizedCatalogsAndBlobsLongerThanDeclaredAreRefused() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await publish(value, version: 1, recipients: [try await identity("sizes")])
    let catalog = published.appending(path: "catalog.json")
    let original = try Data(contentsOf: catalog)
    try (original + Data(repeating: 0x20, count: 4 << 20)).write(to: catalog)
    let big = try await odr(["fetch", "APIKeys"])
    #expect(big.status == 4)
    #expect(big.stderr.contains("larger than 4194304 bytes"))
    try original.write(to: catalog)
    let blob = try apiKeysBlob
    try (try Data(contentsOf: blob) + Data("x".utf8)).write(to: blob)
    let long = try await odr(["fetch", "APIKeys"])
    #expect(long.status == 4, "\(long.stderr)")
    #expect(try await lookup() == nil)
    #expect(!FileManager.default.fileExists(atPath: cache.appending(path: "odr/\(bundle)/blobs/\(blob.lastPathComponent)").path))
  }

  @Test func secretsTagsAreNeverFilesOnDisk() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await publish(value, version: 1, recipients: [try await identity("hygiene")])
    let begin = try await odr(["begin", "APIKeys"])
    #expect(begin.status == 2)
    #expect(begin.stderr.contains("odr fetch APIKeys"))
    #expect(try await odr(["path", "APIKeys"]).status == 2)
    let noBus = try await odr(["prefetch"], ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"])
    #expect(noBus.status == 0, "\(noBus.stderr)")
    #expect(noBus.stdout.contains("skipped    APIKeys"))
    let prefetch = try await odr(["prefetch"])
    #expect(prefetch.status == 0, "\(prefetch.stderr)")
    #expect(prefetch.stdout.contains("imported   APIKeys"))
    #expect(try await lookup() == value)
    #expect(try await odr(["begin", "Onboarding"]).status == 0)
    let status = try await odr(["status"]).stdout
    #expect(status.contains("APIKeys\tprefetch\t1\t") && status.contains("\tencrypted to 1\t"), "\(status)")

    // odr fetch killed at random points, 30 times.
    try await publish(value + "-2", version: 2, recipients: [try await identity("hygiene2")])
    for _ in 0..<30 {
      let process = Process()
      process.executableURL = Paths.odr
      process.arguments = ["fetch", "APIKeys", "--quiet"]
      process.environment = environment
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.run()
      try await Task.sleep(for: .microseconds(Int.random(in: 0...60_000)))  // a random point in the run, not a synchronisation
      kill(process.processIdentifier, SIGKILL)
      await process.exited()
    }
    #expect(try await odr(["fetch", "APIKeys"]).status == 0)
    #expect(try await lookup() == value + "-2")
    for secret in [value, value + "-2"] {
      for folder in [cache, root.appending(path: "state"), root.appending(path: "tmp"), published] {
        #expect(PublishedFiles.containing([secret], under: folder).isEmpty)
      }
    }
  }

  @Test func overHTTPTheSignatureIsCheckedAndAMissingOneIsADowngrade() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let key = try await signingKey("http")
    try await publish(value, version: 1, signedBy: key.secret, recipients: [try await identity("http")])
    try await TestHTTPServer.serving(files: published) { server in
      let http = ["ODR_CATALOG": server.baseURL.absoluteString, "ODR_TRUST": key.public]
      let fetch = try await odr(["fetch", "APIKeys"], http)
      #expect(fetch.status == 0, "\(fetch.stderr)")
      #expect(try await lookup() == value)
      let signature = published.appending(path: "catalog.json.sig")
      var flipped = try Data(contentsOf: signature)
      flipped[flipped.count / 2] ^= 0x01
      try flipped.write(to: signature)
      #expect(try await odr(["begin", "Onboarding"], http).status == 4)
      try FileManager.default.removeItem(at: signature)  // the server answers 404
      let missing = try await odr(["begin", "Onboarding"], http)
      #expect(missing.status == 4)
      #expect(missing.stderr.contains("not signed"))
    }
  }

  @Test func aRollbackIsRefusedEvenWithTheCacheDeleted() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let key = try await signingKey("rollback")
    let recipient = try await identity("rollback")
    try await publish(value + "-old", version: 1, signedBy: key.secret, recipients: [recipient])
    let old = try FileManager.default.contentsOfDirectory(atPath: published.path)
      .reduce(into: [String: Data]()) { $0[$1] = try? Data(contentsOf: published.appending(path: $1)) }
    try await publish(value, version: 2, signedBy: key.secret, recipients: [recipient])
    #expect(try await odr(["fetch", "APIKeys", "--trust", key.public]).status == 0)
    // A host replays version 1, properly signed.
    for (name, data) in old where name.hasPrefix("catalog.json") { try data.write(to: published.appending(path: name)) }
    try FileManager.default.removeItem(at: cache)
    let replay = try await odr(["fetch", "APIKeys", "--trust", key.public])
    #expect(replay.status == 4)
    #expect(replay.stderr.contains("older than version 2"))
    #expect(try await lookup() == value)
  }
}
