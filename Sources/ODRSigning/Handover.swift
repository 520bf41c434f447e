import ODRBase
public import FoundationEssentials
import Dispatch
import Synchronization

/// A signer hand-over statement (docs/trust.md, "Rotating the signing
/// key"): from `version` on, `signers` may sign the bundle's catalogs.
/// It is signed by `signedBy`, a key of the set before it, over
/// ``domain`` (``postQuantumDomain`` when `signedBy` is a hybrid key, whose
/// signature is then the Ed25519 one ‖ the ML-DSA-65 one) + bundle +
/// version + the new set, so that no catalog
/// signature can be replayed as a statement, nor a statement as a catalog
/// signature (catalog signatures have a domain of their own,
/// ``CatalogSignature/domain``), nor a statement of one bundle as one of
/// another.
///
/// A catalog carries the chain of statements from earlier signer sets to
/// its own: a client that trusts K and keeps no state (a CI runner) accepts
/// a catalog signed by K′ when the chain leads from K to K′. A hybrid key
/// never hands over to an Ed25519-only one (that would give up the
/// post-quantum protection): such a chain does not verify.
public struct Handover: Codable, Sendable, Equatable {
  /// The catalog version from which the new set signs.
  public var version: Int
  /// The new signer set.
  public var signers: [VerifyingKey]
  /// The key of the previous set that made the statement.
  public var signedBy: VerifyingKey
  /// Its signature (Ed25519, or hybrid: ``VerifyingKey``), base64.
  public var signature: String

  /// The domain-separation prefix of a statement by an Ed25519 key.
  public static let domain = "odr-handover-v1\n"
  /// The domain-separation prefix of a statement by a hybrid key.
  public static let postQuantumDomain = "odr-handover-v2\n"

  /// The exact bytes `signedBy` signs for a statement.
  public static func message(bundle: String, version: Int, signers: [VerifyingKey], signedBy: VerifyingKey) -> Data {
    let prefix = signedBy.isPostQuantum ? postQuantumDomain : domain
    return Data((prefix + "\(bundle)\n\(version)\n" + signers.map(\.description).sorted().joined(separator: ",") + "\n").utf8)
  }

  /// A statement as read from a catalog (it is checked by ``verifies(bundle:)``).
  public init(version: Int, signers: [VerifyingKey], signedBy: VerifyingKey, signature: String) {
    self.version = version
    self.signers = signers
    self.signedBy = signedBy
    self.signature = signature
  }

  /// A statement of `bundle` handing over to `signers` at `version`, signed by `key`.
  public init(bundle: String, version: Int, signers: [VerifyingKey], signedWith key: SigningKey) throws {
    self.version = version
    self.signers = signers
    signedBy = key.verifyingKey
    signature = Data(try key.signature(for: Self.message(bundle: bundle, version: version, signers: signers, signedBy: signedBy))).base64EncodedString()
  }

  /// True when the statement is `signedBy`'s, for `bundle`.
  public func verifies(bundle: String) -> Bool {
    guard let raw = Base64.decodePadded(signature[...]) else { return false }
    return signedBy.isValidSignature(raw, for: Self.message(bundle: bundle, version: version, signers: signers, signedBy: signedBy))
  }

  /// The keys trusted after following `chain` from `trusted`: ``verify(_:bundle:upTo:)``,
  /// then ``reach(_:from:)``.
  public static func follow(_ chain: [Handover], from trusted: Set<VerifyingKey>, bundle: String, upTo version: Int) throws -> Set<VerifyingKey> {
    try verify(chain, bundle: bundle, upTo: version)
    return reach(chain, from: trusted)
  }

  /// Throws unless every statement verifies for `bundle`, the versions
  /// neither go down nor pass `upTo` (the catalog's version), and no hybrid
  /// key hands over to an Ed25519-only one: a chain that fails is tampered
  /// with (or a downgrade), whoever it would lead to.
  public static func verify(_ chain: [Handover], bundle: String, upTo version: Int) throws {
    let verified = verdicts(chain, bundle: bundle)
    var last = 0
    for (index, link) in chain.enumerated() {
      guard link.version >= last, link.version <= version, !link.signers.isEmpty else {
        throw TrustError(.badSignature, "Hand-over \(index + 1) of the catalog's chain is out of order (version \(link.version)).")
      }
      guard verified[index] else {
        throw TrustError(.badSignature, "Hand-over \(index + 1) of the catalog's chain (to \(link.signers.map(\.shortDescription).joined(separator: ", ")) at version \(link.version)) does not verify as \(link.signedBy.shortDescription)'s statement for \(bundle): it was forged or changed.")
      }
      if let downgrade = link.downgrade {
        throw TrustError(.badSignature, "Hand-over \(index + 1) of the catalog's chain goes from the post-quantum key \(link.signedBy.shortDescription) to \(downgrade): a key without a post-quantum half, which gives up the protection against a forger with a quantum computer; refusing it. If the publisher really left post-quantum signing, pin the new key with --trust (or run `odr trust reset \(bundle)`).")
      }
      last = link.version
    }
  }

  /// Whether each statement of `chain` verifies for `bundle`; a chain with
  /// hybrid statements (~0.2 ms each) is checked on every core.
  private static func verdicts(_ chain: [Handover], bundle: String) -> [Bool] {
    guard chain.count > 1, chain.contains(where: \.signedBy.isPostQuantum) else { return chain.map { $0.verifies(bundle: bundle) } }
    let verified = Mutex([Bool](repeating: false, count: chain.count))
    DispatchQueue.concurrentPerform(iterations: chain.count) { index in
      let verdict = chain[index].verifies(bundle: bundle)
      verified.withLock { $0[index] = verdict }
    }
    return verified.withLock { $0 }
  }

  /// The Ed25519-only keys a hybrid key's statement names (described), or nil.
  public var downgrade: String? {
    let classic = signers.filter { !$0.isPostQuantum }
    guard signedBy.isPostQuantum, !classic.isEmpty else { return nil }
    return classic.map(\.shortDescription).joined(separator: ", ")
  }

  /// The keys trusted after a verified `chain`, from `trusted`: each
  /// statement made by a key trusted so far adds its signers.
  public static func reach(_ chain: [Handover], from trusted: Set<VerifyingKey>) -> Set<VerifyingKey> {
    chain.reduce(into: trusted) { keys, link in
      if keys.contains(link.signedBy) { keys.formUnion(link.signers) }
    }
  }
}
