import Foundation
import ODRCLITesting
import ODRTesting
import ODRSigning
import Testing

/// Post-quantum (hybrid Ed25519 + ML-DSA-65) signing end to end: the built
/// `odr`, keys made by `odr signing-key new --post-quantum` in the real keyring.
extension TrustedDeliveryTests {
  /// A key's exported secret in a 0600 file, for --sign-key-file.
  func keyFile(_ secret: String) throws -> String {
    let file = root.appending(path: "key-\(UUID().uuidString)")
    try Data(secret.utf8).write(to: file)
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
    return file.path
  }

  @Test func aHybridPinIsSatisfiedByTheHybridSignatureOnly() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let pq = try await signingKey("pq", ["--post-quantum"])
    #expect(pq.public.hasPrefix("ed25519-mldsa65:") && pq.secret.hasPrefix("ed25519-mldsa65-secret:"))
    let listed = try await odr(["signing-key", "list", "--json"])
    #expect(listed.stdout.contains(pq.public), "\(listed.stdout.prefix(300))")
    try await publish(value, version: 1, signedBy: pq.secret, recipients: [try await identity("me")])
    let catalog = try Data(contentsOf: published.appending(path: "catalog.json"))
    #expect(String(decoding: catalog, as: UTF8.self).contains(#""formatVersion" : 3"#))
    let fetched = try await odr(["fetch", "APIKeys", "--trust", pq.public], ["CI": "true"])
    #expect(fetched.status == 0, "\(fetched.stderr)")
    #expect(try await lookup() == value)
    // A forger who breaks Ed25519 signs the same bytes with the key's Ed25519 half alone.
    let half = try SigningKey(pq.secret).classicHalf
    try CatalogSignature(signing: catalog, with: [half], format: 3).encoded.write(to: published.appending(path: "catalog.json.sig"))
    let forged = try await odr(["fetch", "APIKeys"], ["CI": "true", "ODR_TRUST": pq.public])
    #expect(forged.status == 4, "\(forged.stderr)")
    #expect(forged.stderr.contains("the Ed25519 half of a post-quantum key"), "\(forged.stderr)")
    #expect(!forged.stderr.contains(pq.public), "a hybrid key is named short in messages")
    #expect(try await lookup() == value)
  }

  /// The documented move (docs/trust.md, "Moving to post-quantum
  /// signatures"): old and new key together, then the new one alone; a
  /// client that pins the old key and keeps no state follows; going back
  /// to Ed25519 alone is refused until the client resets its trust.
  @Test func movingToPostQuantumKeepsOldPinsAndRefusesGoingBack() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let old = try await signingKey("old"), pq = try await signingKey("pq", ["--post-quantum"])
    let oldFile = try keyFile(old.secret), pqFile = try keyFile(pq.secret)
    let me = try await identity("me")
    let stateless = { ["CI": "true", "ODR_TRUST": old.public, "XDG_STATE_HOME": root.appending(path: "ci-\(UUID().uuidString)").path] }
    try await publish(value, version: 1, recipients: [me], ["--sign-key-file", oldFile])
    try await publish(value, version: 2, recipients: [me], ["--sign-key-file", oldFile, "--sign-key-file", pqFile])
    // This machine pins the old key and keeps state: it records the hybrid signer.
    #expect(try await odr(["fetch", "APIKeys", "--trust", old.public]).status == 0)
    try await publish(value, version: 3, recipients: [me], ["--sign-key-file", pqFile])
    let followed = try await odr(["fetch", "APIKeys"], stateless())
    #expect(followed.status == 0, "\(followed.stderr)")
    // Back to the old key alone (a new trust root): the stateless client takes it, this machine does not.
    try await publish(value, version: 4, recipients: [me], ["--sign-key-file", oldFile, "--new-trust-root"])
    let back = try await odr(["fetch", "APIKeys", "--trust", old.public])
    #expect(back.status == 4, "\(back.stderr)")
    #expect(back.stderr.contains("refusing a downgrade to Ed25519 alone") && back.stderr.contains("odr trust reset \(bundle)"), "\(back.stderr)")
    #expect(try await odr(["trust", "reset", bundle]).status == 0)
    #expect(try await odr(["fetch", "APIKeys", "--trust", old.public]).status == 0)
    // A publisher cannot hand a post-quantum bundle back by a statement.
    let refused = try await odr(["pack", source.path, "--output", published.path, "--catalog-version", "5", "--sign-key-file", pqFile,
                                 "--next-signer", old.public, "--new-trust-root", "--recipient", me])
    #expect(refused.status == 4, "\(refused.stderr)")
    #expect(refused.stderr.contains("are all Ed25519 keys"), "\(refused.stderr)")
  }
}
