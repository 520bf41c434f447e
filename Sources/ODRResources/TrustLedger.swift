import FoundationEssentials
import ODRTrust

/// The trust state of one bundle and the rules that admit a catalog
/// (docs/design.md, "The published catalog"): rollback protection, signature under a trusted key, no
/// downgrade to unsigned, expiry, and key rotation through `signers`.
///
/// Admission reads, decides and records under one lock, so two processes
/// cannot both act on the same old state.
struct TrustLedger {
  /// What is remembered of the last accepted catalog.
  struct State: Codable, Equatable {
    /// Once true, unsigned catalogs are refused (no downgrade).
    var signed: Bool
    /// The highest version accepted (rollback protection).
    var version: Int
    /// The keys the last accepted catalog allows to sign the next versions.
    var signers: [VerifyingKey]
    /// The key that signed the last accepted catalog (it may re-serve that version).
    var signer: VerifyingKey?
    /// For unsigned catalogs, the highest version accepted from each
    /// location: anyone may publish an unsigned catalog claiming the
    /// bundle, so one location's versions must not lock out another's.
    var unsignedVersions: [String: Int]? = nil
  }

  let bundle: String
  let folder: URL

  init(bundle: String, stateHome: URL?) {
    self.bundle = bundle
    folder = (stateHome ?? XDGFolders.stateHome).appending(path: "odr").appending(path: bundle)
  }

  var file: URL { folder.appending(path: "trust.json") }

  func state() -> State? {
    guard let data = try? Data(contentsOf: file) else { return nil }
    return try? JSONDecoder().decode(State.self, from: data)
  }

  /// Admits `catalog` (whose exact bytes are `bytes`) or throws an
  /// integrity error saying why not; returns notices for the user (trust on
  /// first use). Nothing is recorded when it is refused.
  func admit(_ catalog: Catalog, bytes: Data, signature: CatalogSignature?, origin: String,
             policy: TrustPolicy) async throws -> [String] {
    try FileIO.makePrivateDirectory(folder.deletingLastPathComponent())
    try FileIO.makePrivateDirectory(folder)
    return try await FileIO.withLock(folder.appending(path: "lock")) {
      let (next, notices) = try decide(catalog, bytes: bytes, signature: signature, origin: origin, state: state(), policy: policy)
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
      try FileIO.atomicWrite(try encoder.encode(next), to: file, mode: 0o600)
      return notices
    }
  }

  /// The decision alone: the next state, or the reason for refusing.
  func decide(_ catalog: Catalog, bytes: Data, signature: CatalogSignature?, origin: String, state: State?,
              policy: TrustPolicy) throws -> (State, [String]) {
    let name = "the catalog of \(bundle) (version \(catalog.version))"
    func refuseRollback(below seen: Int) throws {
      guard catalog.version < seen else { return }
      throw ResourceError(.integrity, "\(name) is older than version \(seen) already accepted on this machine; refusing a rollback. If the publisher really went back, they must publish a version above \(seen).")
    }
    if let state, state.signed { try refuseRollback(below: state.version) }
    guard let signature else {
      if state?.signed == true {
        throw ResourceError(.integrity, "\(name) is not signed (no catalog.json.sig), but this bundle's catalogs were signed before; refusing a downgrade to unsigned. The publisher must sign it (odr pack --sign).")
      }
      if !policy.pinned.isEmpty {
        throw ResourceError(.integrity, "\(name) is not signed (no catalog.json.sig), but signing keys are pinned (--trust, ODR_TRUST or odr.json); refusing it. The publisher must sign it (odr pack --sign).")
      }
      var versions = state?.unsignedVersions ?? [:]
      try refuseRollback(below: versions[origin] ?? 0)
      versions[origin] = catalog.version
      return (State(signed: false, version: catalog.version, signers: [], signer: nil, unsignedVersions: versions), [])
    }
    var trusted = policy.pinned
    if let state, state.signed {
      trusted.formUnion(state.signers)
      if catalog.version == state.version, let signer = state.signer { trusted.insert(signer) }
    }
    let signer: VerifyingKey
    var notices: [String] = []
    if trusted.isEmpty {
      guard let first = signature.validSigners(of: bytes).first else {
        throw ResourceError(.integrity, "\(name): catalog.json.sig does not verify; catalog.json or its signature was changed after signing. Nothing was changed here.")
      }
      signer = first
      notices.append("trusting \(first) for \(bundle) on first use; pin it with --trust \(first) (or ODR_TRUST) to be sure.")
    } else if let valid = signature.validSigner(of: bytes, among: trusted) {
      signer = valid
    } else if let other = signature.validSigners(of: bytes).first {
      throw ResourceError(.integrity, "\(name) is signed by \(other), which is not trusted for \(bundle) (trusted: \(trusted.map(\.description).sorted().joined(separator: ", "))). A rotated key must be listed in the signers of a version signed by a trusted key; if you changed publishers on purpose, pin the new key with --trust.")
    } else {
      throw ResourceError(.integrity, "\(name): catalog.json.sig does not verify under a trusted key; catalog.json or its signature was changed after signing. Nothing was changed here.")
    }
    try policy.refuseIfExpired(catalog)
    let signers = (catalog.signers ?? []).isEmpty ? [signer] : catalog.signers!
    return (State(signed: true, version: catalog.version, signers: signers, signer: signer), notices)
  }
}
