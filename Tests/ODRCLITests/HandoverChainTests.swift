import Foundation
import ODRCatalog
import ODRCLITesting
import ODRTesting
import ODRSigning
import Testing

/// Trust for fleets and CI (issue "Trust that survives fleets and CI"): a
/// client that keeps no state follows signer rotations through the
/// hand-over chain the catalog carries; forged links are refused; `odr pack`
/// refuses a key no earlier catalog handed over to; no trust on first use
/// in CI; `odr verify` of live hosts.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(3))) struct HandoverChainTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-chain-\(UUID().uuidString)")
  let bundle = "com.odr.chain.\(UUID().uuidString.prefix(8).lowercased())"
  var source: URL { root.appending(path: "src") }
  var published: URL { root.appending(path: "pub") }

  /// A fresh machine on every call: its own cache and state (a CI runner).
  func environment(fresh: Bool = true) -> [String: String] {
    var env = KeyringSession.shared.environment
    let machine = fresh ? UUID().uuidString : "kept"
    env["XDG_CACHE_HOME"] = root.appending(path: "machines/\(machine)/cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "machines/\(machine)/state").path
    for name in ["ODR_SERVICE", "ODR_IDENTITY", "ODR_TRUST", "ODR_SIGNING_KEY", "CI", "ODR_CATALOG"] { env[name] = nil }
    return env
  }

  func odr(_ arguments: [String], _ extra: [String: String] = [:], fresh: Bool = true) async throws -> Command.Result {
    try await Command.odr(arguments, environment: environment(fresh: fresh).merging(extra) { $1 })
  }

  /// Packs version `version` into the published folder, signed by `key`.
  @discardableResult
  func pack(_ version: Int, signedBy key: SigningKey?, _ more: [String] = []) async throws -> Command.Result {
    try FileManager.default.createDirectory(at: source.appending(path: "levels"), withIntermediateDirectories: true)
    try Data(#"{"bundle": "\#(bundle)", "tags": {"L": {"category": "onDemand", "files": ["levels/"]}}}"#.utf8)
      .write(to: source.appending(path: "tags.json"))
    try Data("level of version \(version)".utf8).write(to: source.appending(path: "levels/1.txt"))
    return try await odr(["pack", source.path, "--output", published.path, "--catalog-version", "\(version)", "--quiet"] + more,
                         key.map { ["ODR_SIGNING_KEY": $0.secretKeyString] } ?? [:])
  }

  /// A stateless client pinning `pin` reads tag L; its exit status.
  func read(pinning pin: SigningKey, catalog: String? = nil) async throws -> Command.Result {
    try await odr(["begin", "L", "--catalog", catalog ?? published.path], ["ODR_TRUST": pin.verifyingKey.description])
  }

  @Test func aStatelessClientFollowsRotationsThroughTheChain() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let (k1, k2, k3) = (SigningKey(), SigningKey(), SigningKey())
    let nginx = try await Nginx.start(root: published.deletingLastPathComponent())
    defer { nginx.stop() }
    let url = nginx.url.absoluteString + "pub/"
    let steps: [(version: Int, key: SigningKey, next: SigningKey?)] = [(1, k1, nil), (2, k1, k2), (3, k2, k3), (4, k3, nil)]
    for step in steps {
      let packed = try await pack(step.version, signedBy: step.key, step.next.map { ["--next-signer", $0.verifyingKey.description] } ?? [])
      try #require(packed.status == 0, "\(packed.stderr)")
      let client = try await read(pinning: k1, catalog: url)
      #expect(client.status == 0, "version \(step.version): \(client.stderr)")
    }
    let verify = try await odr(["verify", url, "--trust", k1.verifyingKey.description])
    #expect(verify.status == 0, "\(verify.stderr)")
    #expect(verify.stdout.contains("hand-over at version 2: \(k1.verifyingKey) -> \(k2.verifyingKey)"), "\(verify.stdout)")
    #expect(verify.stdout.contains("hand-over at version 3: \(k2.verifyingKey) -> \(k3.verifyingKey)"), "\(verify.stdout)")
    #expect(verify.stdout.contains("signed by \(k3.verifyingKey)"), "\(verify.stdout)")
    // A key pinned mid-chain follows from there; an unrelated key's v5 is refused.
    #expect(try await read(pinning: k2, catalog: url).status == 0)
    let stranger = SigningKey()
    let refusedPack = try await pack(5, signedBy: stranger)
    #expect(refusedPack.status == 4, "\(refusedPack.stderr)")
    let packed = try await pack(5, signedBy: stranger, ["--new-trust-root"])
    #expect(packed.status == 0, "\(packed.stderr)")
    let refused = try await read(pinning: k1, catalog: url)
    #expect(refused.status == 4, "\(refused.stderr)")
    #expect(refused.stderr.contains("hand-over chain"), "\(refused.stderr)")
    #expect(try await odr(["verify", url, "--trust", k1.verifyingKey.description]).status == 4)
  }

  @Test func packRefusesAKeyNoEarlierCatalogHandedOverToAndWritesNothing() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let (k1, other) = (SigningKey(), SigningKey())
    try #require(try await pack(13, signedBy: k1).status == 0)
    func snapshot() throws -> [String: Data] {
      var files: [String: Data] = [:]
      for name in try FileManager.default.subpathsOfDirectory(atPath: published.path) {
        files[name] = try? Data(contentsOf: published.appending(path: name))
      }
      return files
    }
    let before = try snapshot()
    let refused = try await pack(14, signedBy: other)
    #expect(refused.status == 4, "\(refused.stderr)")
    #expect(refused.stderr.contains("--new-trust-root"), "\(refused.stderr)")
    #expect(try snapshot() == before)
  }

  /// A build that packs into an empty folder carries the chain with
  /// --previous; without it, odr publish refuses to drop the published chain.
  @Test func aFreshBuildFolderCarriesTheChainOrPublishRefuses() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let (old, new) = (SigningKey(), SigningKey())
    let www = root.appending(path: "www")
    try #require(try await pack(7, signedBy: old, ["--next-signer", new.verifyingKey.description]).status == 0)
    #expect(try await odr(["publish", published.path, www.path, "--quiet"]).status == 0)
    // Version 8 built from scratch, signed by the new key.
    try FileManager.default.removeItem(at: published)
    try #require(try await pack(8, signedBy: new).status == 0)
    let dropped = try await odr(["publish", published.path, www.path])
    #expect(dropped.status == 4, "\(dropped.stderr)")
    #expect(dropped.stderr.contains("--previous"), "\(dropped.stderr)")
    try FileManager.default.removeItem(at: published)
    let carried = try await pack(8, signedBy: new, ["--previous", www.path])
    #expect(carried.status == 0, "\(carried.stderr)")
    #expect(try await odr(["publish", published.path, www.path, "--quiet"]).status == 0)
    #expect(try await read(pinning: old, catalog: www.path).status == 0)
    // A key the published catalog does not hand over to: refused, unless a new trust root.
    let stranger = SigningKey()
    try FileManager.default.removeItem(at: published)
    try #require(try await pack(9, signedBy: stranger, ["--new-trust-root"]).status == 0)
    let foreign = try await odr(["publish", published.path, www.path])
    #expect(foreign.status == 4, "\(foreign.stderr)")
    #expect(try await odr(["publish", published.path, www.path, "--new-trust-root", "--quiet"]).status == 0)
    #expect(try await read(pinning: old, catalog: www.path).status == 4)
  }

  /// `--previous` names the published catalog by URL, read as `odr verify`
  /// reads it (its chain carried, its signers deciding), or a folder that
  /// must exist: a typo is refused, never taken for a first publish.
  @Test func previousIsReadFromItsHostOrRefusedWhenMissing() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let (old, new, stranger) = (SigningKey(), SigningKey(), SigningKey())
    let www = root.appending(path: "www")
    try #require(try await pack(7, signedBy: old, ["--next-signer", new.verifyingKey.description]).status == 0)
    #expect(try await odr(["publish", published.path, www.path, "--quiet"]).status == 0)
    let nginx = try await Nginx.start(root: www)
    defer { nginx.stop() }
    try FileManager.default.removeItem(at: published)
    let refused = try await pack(8, signedBy: stranger, ["--previous", nginx.url.absoluteString])
    #expect(refused.status == 4, "\(refused.stderr)")
    #expect(refused.stderr.contains("not among the keys the previous catalog (version 7)"), "\(refused.stderr)")
    let carried = try await pack(8, signedBy: new, ["--previous", nginx.url.absoluteString])
    #expect(carried.status == 0, "\(carried.stderr)")
    #expect(try await odr(["publish", published.path, www.path, "--quiet"]).status == 0)
    #expect(try await read(pinning: old, catalog: www.path).status == 0)

    try FileManager.default.removeItem(at: published)
    let missing = try await pack(9, signedBy: new, ["--previous", root.appending(path: "ww").path])
    #expect(missing.status == 3, "\(missing.stderr)")
    #expect(missing.stderr.contains("does not exist"), "\(missing.stderr)")
    #expect(!FileManager.default.fileExists(atPath: published.path))
  }

  /// The catalog in the published folder, re-signed by `signer` after `edit`.
  func forge(signer: SigningKey, _ edit: (inout Catalog) throws -> Void) throws {
    var catalog = try Catalog.decode(Data(contentsOf: published.appending(path: "catalog.json")))
    try edit(&catalog)
    let bytes = catalog.encoded()
    try bytes.write(to: published.appending(path: "catalog.json"))
    try CatalogSignature(signing: bytes, with: signer).encoded.write(to: published.appending(path: "catalog.json.sig"))
  }

  @Test(arguments: ["wrong signer", "catalog signature as a link", "link of another bundle", "link after the catalog's version"])
  func aForgedLinkIsRefused(_ forgery: String) async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let (k1, evil) = (SigningKey(), SigningKey())
    try #require(try await pack(1, signedBy: k1).status == 0)
    try forge(signer: evil) { catalog in
      catalog.version = 2
      catalog.signers = [evil.verifyingKey]
      var link = try Handover(bundle: bundle, version: 2, signers: [evil.verifyingKey], signedWith: evil)
      switch forgery {
      case "wrong signer":
        link.signedBy = k1.verifyingKey  // claims K1, signed by the attacker
      case "catalog signature as a link":
        // What K1 really signed (its catalog), passed off as K1's statement.
        let signed = try Data(contentsOf: published.appending(path: "catalog.json.sig"))
        let line = String(decoding: signed, as: UTF8.self).split(separator: " ")[1].trimmingCharacters(in: .whitespacesAndNewlines)
        link.signedBy = k1.verifyingKey
        link.signature = line
      case "link of another bundle":
        link = try Handover(bundle: "com.odr.chain.other", version: 2, signers: [evil.verifyingKey], signedWith: k1)
      default:
        link = try Handover(bundle: bundle, version: 3, signers: [evil.verifyingKey], signedWith: k1)
      }
      catalog.handovers = [link]
    }
    let result = try await read(pinning: k1)
    #expect(result.status == 4, "\(result.stderr)")
    #expect(try await odr(["verify", published.path, "--trust", k1.verifyingKey.description]).status == 4)
    // odr pack carries no forged chain forward (a hostile --previous host).
    let before = try Data(contentsOf: published.appending(path: "catalog.json"))
    let carried = try await pack(3, signedBy: evil)
    #expect(carried.status == 4 && carried.stderr.contains("hand-over chain of the previous catalog (version 2) does not verify"), "\(carried.stderr)")
    #expect(try Data(contentsOf: published.appending(path: "catalog.json")) == before)
  }

  /// `odr verify` says one thing about the signature: by whom it verifies,
  /// that it verifies by a key no --trust key leads to, that it does not
  /// verify, or that there is none.
  @Test func verifySaysWhatTheSignatureIs() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let key = SigningKey()
    try #require(try await pack(1, signedBy: key, ["--expires", "30d"]).status == 0)
    func verify(_ trust: SigningKey) async throws -> (text: String, signature: String?) {
      let text = try await odr(["verify", published.path, "--trust", trust.verifyingKey.description]).stdout
      let json = try await odr(["verify", published.path, "--trust", trust.verifyingKey.description, "--json"]).stdout
      return (text, (try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])?["signature"] as? String)
    }
    let good = try await verify(key)
    #expect(good.text.contains("\n  signed by \(key.verifyingKey)\n") && good.signature == "verified", "\(good.text)")
    let stranger = try await verify(SigningKey())
    #expect(stranger.text.contains("\n  signed by \(key.verifyingKey), which no --trust key leads to\n") && stranger.signature == "untrusted",
            "\(stranger.text)")
    #expect(!stranger.text.contains("not signed"))
    let signature = published.appending(path: "catalog.json.sig")
    var bytes = try Data(contentsOf: signature)
    bytes[bytes.count - 3] ^= 1
    try bytes.write(to: signature)
    let tampered = try await verify(key)
    #expect(tampered.text.contains("\n  signature does not verify\n") && tampered.signature == "invalid", "\(tampered.text)")
    #expect(!tampered.text.contains("signed by") && !tampered.text.contains("not signed"), "\(tampered.text)")
    try FileManager.default.removeItem(at: signature)
    let absent = try await verify(key)
    #expect(absent.text.contains("\n  not signed\n") && absent.signature == "absent", "\(absent.text)")
  }

  @Test func ciRefusesTrustOnFirstUseUnlessAskedAndSaysWhenASecretIsEmpty() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try #require(try await pack(1, signedBy: SigningKey()).status == 0)
    let ci = try await odr(["begin", "L", "--catalog", published.path], ["CI": "true"])
    #expect(ci.status == 4, "\(ci.stderr)")
    #expect(ci.stderr.contains("ODR_TRUST"), "\(ci.stderr)")
    #expect(try await odr(["begin", "L", "--catalog", published.path, "--trust-on-first-use"], ["CI": "true"]).status == 0)
    #expect(try await odr(["begin", "L", "--catalog", published.path]).status == 0)  // not CI: first use
    let empty = try await odr(["begin", "L", "--catalog", published.path], ["CI": "true", "ODR_TRUST": ""])
    #expect(empty.status == 2)
    #expect(empty.stderr.contains("set but empty"), "\(empty.stderr)")
  }

  @Test func anUnsignedExpiredCatalogIsRefusedOnFirstFetch() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try #require(try await pack(1, signedBy: nil).status == 0)
    let file = published.appending(path: "catalog.json")
    var catalog = try Catalog.decode(Data(contentsOf: file))
    catalog.expires = Date(timeIntervalSince1970: 978_307_200)  // 2001-01-01
    try catalog.encoded().write(to: file)
    let result = try await odr(["begin", "L", "--catalog", published.path])
    #expect(result.status == 4, "\(result.stderr)")
    #expect(result.stderr.contains("expired on 2001-01-01"), "\(result.stderr)")
  }

  @Test func odrVerifyReadsAnS3Catalog() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let key = SigningKey()
    try #require(try await pack(1, signedBy: key).status == 0)
    let moto = try await MotoServer.start()
    let catalog = "s3://\(moto.bucket)/apps/chain"
    let user = moto.environment(moto.user, base: environment())
    #expect(try await Command.odr(["publish", published.path, catalog], environment: user).status == 0)
    let verify = try await Command.odr(["verify", catalog, "--trust", key.verifyingKey.description, "--min-validity", "7d"], environment: user)
    #expect(verify.status == 0, "\(verify.stderr)")
    #expect(verify.stdout.contains("signed by \(key.verifyingKey)"), "\(verify.stdout)")
    let stranger = try await Command.odr(["verify", catalog, "--trust", SigningKey().verifyingKey.description], environment: user)
    #expect(stranger.status == 4, "\(stranger.stderr)")
  }
}
