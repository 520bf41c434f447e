import ODRBase
import Foundation
import ODRCatalog
import ODRTesting
import ODRSigning
import ODRTrust
import Testing

/// The one trust decision as a table (docs/trust.md, "Threat model"): one
/// row per situation — who serves what, against which state — with the
/// verdict and why. The rows are the threat model's index.
@Suite(.enabled(if: TestSelection.untagged)) struct TrustDecisionTests {
  /// The keys of the story: the publisher's key, its successor, an
  /// attacker's (a host, a mirror, a cache writer, a cloned repository, or
  /// another bundle's publisher all sign with keys of their own).
  static let real = SigningKey(), next = SigningKey(), attacker = SigningKey()
  static let bundle = "com.example.app"
  static let now = Date(timeIntervalSince1970: 2_000_000_000)
  static let later = now.addingTimeInterval(30 * 86_400)

  static func header(_ version: Int, bundle: String = bundle, signers: [SigningKey]? = [real], handovers: [Handover]? = nil,
                     expires: Date? = later, digest: String = "A") -> CatalogHeader {
    CatalogHeader(bundle: bundle, version: version, expires: expires, signers: signers?.map(\.verifyingKey), handovers: handovers, digest: digest)
  }

  /// State after accepting `version` through `root`.
  static func state(root: SigningKey = real, version: Int = 5, signer: SigningKey = real, signers: [SigningKey] = [real],
                    firstUse: Bool = false, digest: String? = "A") -> TrustLedger.State {
    TrustLedger.State(signed: true, roots: [root.verifyingKey.description: .init(
      firstUse: firstUse, version: version, signers: signers.map(\.verifyingKey), signer: signer.verifyingKey, digest: digest)])
  }

  /// Hybrid Ed25519 + ML-DSA-65 keys: the publisher's, and another. A
  /// forger with a quantum computer holds `pq.classicHalf` (and every
  /// Ed25519 key), never the ML-DSA half.
  static let pq = try! SigningKey(postQuantum: true), otherPQ = try! SigningKey(postQuantum: true)
  static let handoverToPQ = try! Handover(bundle: bundle, version: 6, signers: [pq.verifyingKey], signedWith: real)
  static let handoverPQToClassic = try! Handover(bundle: bundle, version: 6, signers: [next.verifyingKey], signedWith: pq)
  /// A quantum forger's statement: the publisher's old Ed25519 key hands over to the forger's own hybrid key.
  static let forgedHandoverToOtherPQ = try! Handover(bundle: bundle, version: 10, signers: [otherPQ.verifyingKey], signedWith: real)

  static let handoverToNext = try! Handover(bundle: bundle, version: 6, signers: [next.verifyingKey], signedWith: real)
  static let forgedHandover = try! Handover(bundle: bundle, version: 6, signers: [attacker.verifyingKey], signedWith: attacker)

  struct Row: CustomTestStringConvertible, Sendable {
    let situation: String
    let decision: TrustDecision
    /// nil: admitted; else a phrase of the refusal.
    let refusal: String?
    var testDescription: String { situation }
  }

  static func row(_ situation: String, _ header: CatalogHeader, signedBy: [SigningKey]?, pinned: [SigningKey] = [],
                  origin: TrustDecision.PinOrigin = .flag, state: TrustLedger.State? = nil, locationBundle: String? = nil,
                  now: Date? = now, firstUse: Bool = true, keeping: Bool = false,
                  location: String = "https://cdn.example/app/catalog.json", refusal: String?) -> Row {
    Row(situation: situation, decision: TrustDecision(
      header: header, signedBy: signedBy?.map(\.verifyingKey), pinned: Set(pinned.map(\.verifyingKey)), pinOrigin: origin,
      location: location, locationBundle: locationBundle, now: now, allowsFirstUse: firstUse,
      state: state, keeping: keeping), refusal: refusal)
  }

  static let repository = TrustDecision.PinOrigin.repository(file: "/home/u/clone/odr.json", bundle: nil)

  static let rows: [Row] = [
    // First contact
    row("first use: signed by a key the catalog lists", header(1), signedBy: [real], refusal: nil),
    row("first use: a host adds a signature line of its own", header(1), signedBy: [attacker], refusal: "does not list"),
    row("first use in CI (no pins, no state)", header(1), signedBy: [real], firstUse: false, refusal: "CI=true"),
    row("first use: unsigned, nothing pinned", header(1), signedBy: nil, refusal: nil),
    // Pinned
    row("pinned: signed by the pinned key", header(1), signedBy: [real], pinned: [real], refusal: nil),
    row("pinned: a host serves a catalog signed by its own key", header(1, signers: [attacker]), signedBy: [attacker], pinned: [real], refusal: "not trusted"),
    row("pinned: a host serves it unsigned", header(1), signedBy: nil, pinned: [real], refusal: "signing keys are pinned"),
    row("pinned: a tampered signature line (none verifies)", header(1), signedBy: [], pinned: [real], refusal: "does not verify"),
    row("chain: pinned key hands over to the next (stateless CI)", header(6, signers: [next], handovers: [handoverToNext]), signedBy: [next], pinned: [real], refusal: nil),
    row("chain: a forged hand-over by the attacker's key", header(6, signers: [attacker], handovers: [forgedHandover]), signedBy: [attacker], pinned: [real], refusal: "not trusted"),
    row("chain: a hand-over statement of another bundle", header(6, bundle: "com.other", signers: [next], handovers: [handoverToNext]), signedBy: [next], pinned: [real], refusal: "does not verify"),
    // Remembered state
    row("state: the next version by a remembered signer", header(6), signedBy: [real], state: state(), refusal: nil),
    row("state: a mirror serves a valid older catalog (skipped, not fatal)", header(4), signedBy: [real], state: state(), refusal: "rollback"),
    row("state: unsigned after signed (downgrade)", header(6), signedBy: nil, state: state(), refusal: "downgrade"),
    row("state: unsigned after signed, from a folder (someone trying odr out)", header(6), signedBy: nil, state: state(),
        location: "file:///home/u/try/catalog.json", refusal: "Trying it out with a folder of your own? `odr trust reset \(bundle)`"),
    row("state: a key nobody handed over to", header(6, signers: [attacker]), signedBy: [attacker], state: state(), refusal: "not trusted"),
    row("same version re-signed to extend it (only expires differs)", header(5, expires: later.addingTimeInterval(86_400)), signedBy: [real], state: state(), refusal: nil),
    row("same version, other content, by its own signer", header(5, digest: "B"), signedBy: [real], state: state(), refusal: "more than its expiry"),
    row("retired key re-serves version N listing itself", header(6, signers: [real], digest: "B"), signedBy: [real],
        state: state(version: 6, signer: real, signers: [next]), refusal: "more than its expiry"),
    row("retired key signs a later version", header(7, signers: [real]), signedBy: [real], state: state(version: 6, signer: real, signers: [next]), refusal: "not trusted"),
    row("state written before digests: same version admitted", header(5, digest: "B"), signedBy: [real], state: state(digest: nil), refusal: nil),
    // Expiry and the clock
    row("expired catalog (freeze: replayed past its expiry)", header(5, expires: now.addingTimeInterval(-1)), signedBy: [real], state: state(), refusal: "expired"),
    row("client clock rolled back: the version floor still holds", header(4, expires: now.addingTimeInterval(-400 * 86_400)), signedBy: [real],
        state: state(), now: now.addingTimeInterval(-500 * 86_400), refusal: "rollback"),
    // Locations and bundles
    row("a location bound to another bundle serves this one", header(1), signedBy: [real], locationBundle: "com.victim", refusal: "served catalogs of com.victim"),
    // A cloned repository's odr.json (adopted)
    row("repository pins the attacker for a bundle with state (takeover)", header(6, signers: [attacker]), signedBy: [attacker], pinned: [attacker], origin: repository,
        state: state(), refusal: "never adds a trust root"),
    row("repository speaks for another bundle", header(1), signedBy: [real], pinned: [real],
        origin: .repository(file: "/home/u/clone/odr.json", bundle: "com.example.other"), refusal: "speaks for com.example.other only"),
    row("repository pins a key the bundle already trusts", header(6), signedBy: [real], pinned: [real], origin: repository, state: state(), refusal: nil),
    row("repository pins on first contact (CI checkout)", header(1), signedBy: [real], pinned: [real], origin: repository, firstUse: false, refusal: nil),
    row("flag pins a new key for a bundle with state (the user's choice)", header(6, signers: [next]), signedBy: [next], pinned: [next], state: state(), refusal: nil),
    // The kept catalog (a cache writer)
    row("kept catalog under the state it was accepted with", header(5), signedBy: [real], state: state(), now: nil, keeping: true, refusal: nil),
    row("kept catalog rewritten by a cache writer (other signer)", header(5, signers: [attacker], digest: "B"), signedBy: [attacker], state: state(), now: nil, keeping: true, refusal: "not trusted"),
    row("kept catalog with pins no longer matching", header(5), signedBy: [real], pinned: [next], state: TrustLedger.State(signed: true), now: nil, keeping: true, refusal: "not trusted"),
    // Post-quantum (hybrid Ed25519 + ML-DSA-65) keys: no downgrade
    row("hybrid pin: signed by the hybrid key", header(1, signers: [pq]), signedBy: [pq], pinned: [pq], refusal: nil),
    row("hybrid pin: a line of its Ed25519 half alone (a quantum forger)", header(1, signers: [pq]), signedBy: [pq.classicHalf], pinned: [pq], refusal: "the Ed25519 half of a post-quantum key"),
    row("hybrid pin: another hybrid key", header(1, signers: [otherPQ]), signedBy: [otherPQ], pinned: [pq], refusal: "not trusted"),
    row("hybrid pin: a hand-over from the hybrid key to an Ed25519 one", header(6, signers: [next], handovers: [handoverPQToClassic]), signedBy: [next], pinned: [pq], refusal: "without a post-quantum half"),
    row("Ed25519 pin: a hand-over from it to a hybrid key (the migration)", header(6, signers: [pq], handovers: [handoverToPQ]), signedBy: [pq], pinned: [real], refusal: nil),
    row("Ed25519 pin: signed by the old and the new hybrid key (the migration)", header(6, signers: [real, pq], handovers: [handoverToPQ]), signedBy: [real, pq], pinned: [real], refusal: nil),
    row("state: a hybrid signer accepted, then a listed Ed25519 key signs (downgrade)", header(7, signers: [real]), signedBy: [real],
        state: state(version: 6, signer: pq, signers: [pq, real]), refusal: "refusing a downgrade to Ed25519 alone"),
    row("state: a hybrid root (first use), then its Ed25519 half alone", header(6, signers: [pq]), signedBy: [pq.classicHalf],
        state: state(root: pq, signer: pq, signers: [pq], firstUse: true), refusal: "the Ed25519 half of a post-quantum key"),
    row("state: a hybrid root, the next version by it", header(6, signers: [pq]), signedBy: [pq], state: state(root: pq, signer: pq, signers: [pq]), refusal: nil),
    row("Ed25519 pin, hybrid signer recorded: a forged hand-over from the Ed25519 key to a forger's hybrid key", header(10, signers: [otherPQ], handovers: [forgedHandoverToOtherPQ]),
        signedBy: [otherPQ], pinned: [real], state: state(version: 9, signer: pq, signers: [pq]), refusal: "refusing a downgrade to Ed25519 alone"),
    row("hybrid pin after the migration catalog (it listed the Ed25519 key): the same forged hand-over", header(10, signers: [otherPQ], handovers: [forgedHandoverToOtherPQ]),
        signedBy: [otherPQ], pinned: [pq], state: state(root: pq, version: 8, signer: pq, signers: [real, pq]), refusal: "refusing a downgrade to Ed25519 alone"),
    row("hybrid root (first use), then the user pins the old Ed25519 key", header(10, signers: [real]), signedBy: [real], pinned: [real],
        state: state(root: pq, version: 9, signer: pq, signers: [pq], firstUse: true), refusal: "refusing a downgrade to Ed25519 alone"),
    row("the old Ed25519 key and the hybrid key both pinned, no state: the old key alone (a quantum forger)", header(10, signers: [real]), signedBy: [real],
        pinned: [real, pq], refusal: "refusing a downgrade to Ed25519 alone"),
    row("Ed25519 pin, hybrid signer recorded: the real hybrid key signs on", header(10, signers: [pq]), signedBy: [pq], pinned: [real],
        state: state(version: 9, signer: pq, signers: [pq]), refusal: nil),
  ]

  @Test(arguments: rows) func decides(_ row: Row) {
    switch Result(catching: { try row.decision.decide() }) {
    case .success:
      #expect(row.refusal == nil, "admitted, expected a refusal with “\(row.refusal ?? "")”")
    case .failure(let error):
      let message = (error as? ResourceError)?.message ?? "\(error)"
      #expect((error as? ResourceError)?.code == .integrity, "\(message)")
      if let phrase = row.refusal {
        #expect(message.contains(phrase), "\(message)")
      } else {
        Issue.record("refused: \(message)")
      }
    }
  }

  /// A downgrade served by a host is never explained away as a trial.
  @Test func aHostsDowngradeOffersNoReset() throws {
    let decision = Self.row("", Self.header(6), signedBy: nil, state: Self.state(), refusal: nil).decision
    let error = try #require(throws: ResourceError.self) { try decision.decide() }
    #expect(error.message.contains("downgrade"))
    #expect(!error.message.contains("odr trust reset"), "\(error.message)")
  }

  @Test func anAdmissionRecordsTheVersionSignersAndDigest() throws {
    let admission = try Self.row("", Self.header(6, signers: [Self.next], handovers: [Self.handoverToNext], digest: "C"),
                                 signedBy: [Self.next], pinned: [Self.real], state: Self.state(), refusal: nil).decision.decide()
    let root = try #require(admission.state.roots[Self.real.verifyingKey.description])
    #expect(root.version == 6)
    #expect(root.signer == Self.next.verifyingKey)
    #expect(root.signers == [Self.next.verifyingKey])
    #expect(root.digest == "C")
  }

  /// A catalog signed by the old key and the new hybrid one records the
  /// hybrid signer, so the bundle's floor is post-quantum from then on.
  @Test func theMigrationRecordsTheHybridSigner() throws {
    let admission = try Self.row("", Self.header(6, signers: [Self.real, Self.pq], handovers: [Self.handoverToPQ]), signedBy: [Self.real, Self.pq],
                                 pinned: [Self.real], state: Self.state(), refusal: nil).decision.decide()
    #expect(admission.state.roots[Self.real.verifyingKey.description]?.signer == Self.pq.verifyingKey)
    let after = Self.row("", Self.header(7, signers: [Self.real, Self.pq]), signedBy: [Self.real], pinned: [Self.real], state: admission.state, refusal: nil)
    let error = try #require(throws: ResourceError.self) { try after.decision.decide() }
    #expect(error.message.contains("downgrade to Ed25519 alone"), "\(error.message)")
  }

  /// With pins or state, no sequence of catalogs served by someone without
  /// a trusted key — any versions, signer lists, replayed or forged
  /// hand-overs, unsigned or signed by keys of their own — changes what the
  /// client trusts. Post-quantum, the client has accepted the migration
  /// catalog (signed by the old Ed25519 key and the hybrid one, listing
  /// both), pinning the hybrid key or remembering the old one, and the
  /// attacker holds every Ed25519 key — the old one and the hybrid key's
  /// Ed25519 half included (a quantum computer) — and hybrid keys of its own.
  /// (Seeded, so a failure reproduces; 2,000 sequences each.)
  @Test(arguments: [false, true], [false, true]) func nothingAnAttackerServesChangesTrust(pinned: Bool, postQuantum: Bool) {
    var generator = SeededGenerator(seed: (pinned ? 0x7a11 : 0x57a7e) + (postQuantum ? 0x9 : 0))
    let victim = postQuantum ? Self.pq : Self.real
    let attackers = [Self.attacker, SigningKey(), Self.otherPQ] + (postQuantum ? [Self.pq.classicHalf, Self.real, Self.next] : [])
    // Every statement an attacker can make, made once (ML-DSA signs in ~1 ms).
    let statements = attackers.map { key in
      (1...9).map { try! Handover(bundle: Self.bundle, version: $0, signers: [attackers.randomElement(using: &generator)!.verifyingKey], signedWith: key) }
    }
    let start = postQuantum ? Self.state(root: pinned ? Self.pq : Self.real, signer: Self.pq, signers: [Self.real, Self.pq]) : Self.state()
    for _ in 0..<2_000 {
      var state = start
      for _ in 0..<Int.random(in: 1...6, using: &generator) {
        let signers = (0..<Int.random(in: 0...2, using: &generator)).map { _ in attackers.randomElement(using: &generator)! }
        var chain: [Handover] = []
        if Bool.random(using: &generator) { chain.append(Self.forgedHandover) }
        for _ in 0..<Int.random(in: 0...2, using: &generator) {
          chain.append(statements.randomElement(using: &generator)!.randomElement(using: &generator)!)
        }
        let signedBy: [SigningKey]? = Int.random(in: 0..<5, using: &generator) == 0 ? nil : [attackers.randomElement(using: &generator)!]
        let header = Self.header(Int.random(in: 1...9, using: &generator), signers: signers.isEmpty ? nil : signers, handovers: chain.isEmpty ? nil : chain,
                                 digest: ["A", "B"].randomElement(using: &generator)!)
        let decision = TrustDecision(header: header, signedBy: signedBy?.map(\.verifyingKey), pinned: pinned ? [victim.verifyingKey] : [],
                                     location: "https://mirror.example/catalog.json", now: Self.now, state: state)
        if let admission = try? decision.decide() { state = admission.state }
        #expect(state == start, "an attacker's catalog changed the trust state: version \(header.version), signed by \(signedBy?.count ?? 0) attacker keys")
        if state != start { return }
      }
    }
  }
}
