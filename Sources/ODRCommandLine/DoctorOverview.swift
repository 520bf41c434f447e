import FoundationEssentials
import ODRAge
import ODRBase
import ODRCatalog
import ODRConfiguration
import ODRKeyring
import ODRKeys
import ODRResources
import ODRSigning
import ODRTrust

/// What `odr doctor` shows beyond the keyring's probe: the store keys go
/// to, this machine's identities (with recipients) and signing keys (with
/// public keys), the bundles it trusts, the configured catalog and its
/// expiry, and the keys of the current service. Each part that cannot be
/// read says why and what to do, in `notes`; none changes the exit status.
struct DoctorOverview: Encodable {
  struct Identity: Encodable { let name: String; let recipients: [String] }
  struct SigningKeyEntry: Encodable { let name: String; let publicKey: String }
  struct Bundle: Encodable {
    let bundle: String
    let signed: Bool
    /// The highest version accepted under any root.
    @NullWhenAbsent var version: Int?
    let signers: [String]
    /// Where its trust state lives.
    let state: String
  }
  struct CatalogState: Encodable {
    let locations: [String]
    @NullWhenAbsent var bundle: String?
    @NullWhenAbsent var version: Int?
    @NullWhenAbsent var expires: Date?
    @NullWhenAbsent var expiresInDays: Int?
  }
  struct Service: Encodable { let service: String; let keys: Int }

  /// `secret-service` or `kernel`: where keys go (`--store`'s default here).
  let store: String
  /// Whether the identities and signing keys could be read: when not,
  /// `identities` and `signingKeys` are empty because they are unknown.
  var privateKeysRead = false
  var identities: [Identity] = []
  var signingKeys: [SigningKeyEntry] = []
  var bundles: [Bundle] = []
  @NullWhenAbsent var catalog: CatalogState?
  var services: [Service] = []
  /// What could not be read, each with what to do.
  var notes: [String] = []

  /// Gathers the overview of store `kind`; `keyringUsable`: whether the
  /// store may be asked (a failed probe is reported already); `notes`: the
  /// caller's, first.
  static func gather(_ context: CommandContext, kind: KeyStoreKind, keyringUsable: Bool, timeout: Double, notes: [String] = []) async -> DoctorOverview {
    var notes = notes
    var overview = DoctorOverview(store: kind.rawValue)
    if keyringUsable {
      do {
        let identities = try StoreOptions.privateStore(PrivateKeyring.identityService, kind: kind, timeout: timeout, context)
        overview.identities = try await identities.values(for: nil).sorted { $0.key < $1.key }.map { name, value in
          // an item that is no identity is named with no recipient: `odr identity list` says why
          let parsed = (dropping(.isTheAnswer) { try AgeIdentity.parseFile(value) }) ?? []
          return Identity(name: name, recipients: parsed.map(\.recipient.description))
        }
        let signing = try StoreOptions.privateStore(PrivateKeyring.signingKeyService, kind: kind, timeout: timeout, context)
        overview.signingKeys = try await signing.values(for: nil).sorted { $0.key < $1.key }.compactMap { name, value in
          // not a signing key: `odr signing-key list` says why
          (dropping(.isTheAnswer) { try SigningKey(value) }).map { SigningKeyEntry(name: name, publicKey: $0.verifyingKey.description) }
        }
        overview.privateKeysRead = true
      } catch {
        notes.append("The private keys could not be read: \(error)")
      }
    }
    let stateHome = context.folders.stateHome
    for name in TrustLedger.bundles(stateHome: stateHome) {
      let ledger = TrustLedger(bundle: name, stateHome: stateHome)
      do {
        guard let state = try ledger.state() else { continue }
        let roots = state.roots.values
        overview.bundles.append(Bundle(bundle: name, signed: state.signed, version: roots.map(\.version).max(),
                                       signers: Array(Set(roots.map(\.signer.description))).sorted(),
                                       state: stateHome.appending(path: "odr").appending(path: name).path))
      } catch {
        notes.append("\(name): \(error)")
      }
    }
    var bundle: String?
    do {
      let configuration = try CatalogOptions.discover(context)
      if let location = configuration.locations.first {
        var catalog = CatalogState(locations: configuration.locations.map(\.redacted))
        if let kept = dropping(.isTheAnswer, { try ResourceCatalog.loadKept(from: location, cacheHome: configuration.folders.cacheHome, trust: configuration.trust) }) {
          (catalog.bundle, catalog.version, catalog.expires) = (kept.catalog.bundle, kept.catalog.version, kept.catalog.expires)
          catalog.expiresInDays = kept.catalog.expires.map { Int(($0.timeIntervalSince(context.now()) / 86_400).rounded(.down)) }
          bundle = kept.catalog.bundle
          if let days = catalog.expiresInDays, days < 7 {
            notes.append("The catalog \(kept.catalog.bundle) expires in \(max(days, 0)) day\(days == 1 ? "" : "s"): its publisher must re-sign it (odr pack --sign, odr publish) before clients refuse it.")
          }
        } else {
          notes.append("The catalog at \(location.redacted) was not fetched on this machine yet: `odr fetch APIKeys` (or `odr begin TAG`) reads and checks it.")
        }
        overview.catalog = catalog
      }
    } catch {
      notes.append("The catalog settings cannot be read: \(error)")
    }
    if keyringUsable {
      do {
        var counts = kind == .kernel ? try KernelKeyringStore.keyCounts(stateHome: stateHome)
                                     : try await SecretServiceStore.keyCounts(deadline: StoreOptions.deadline(seconds: timeout))
        // the service key commands use now, even with no key yet
        if let current = context.variable("ODR_SERVICE") ?? bundle, counts[current] == nil { counts[current] = 0 }
        overview.services = counts.sorted { $0.key < $1.key }.map { Service(service: $0.key, keys: $0.value) }
      } catch {
        notes.append("The services holding keys could not be listed: \(error)")
      }
    }
    overview.notes = notes
    return overview
  }

  /// The overview as lines for a person, control characters escaped (names
  /// come from the keyring, which any program of the user may write to).
  var lines: [String] {
    var lines = ["", "store: \(store)\(store == KeyStoreKind.kernel.rawValue ? " (the kernel keyring)" : " (the desktop keyring)")"]
    let unread = "not readable (the keyring is not reachable: see above)"
    lines.append(!privateKeysRead ? "identities: \(unread)" : identities.isEmpty ? "identities: none (`odr identity new NAME` makes one, to read encrypted packs)" : "identities:")
    lines += identities.map { "  \($0.name)  \($0.recipients.joined(separator: ", "))" }
    lines.append(!privateKeysRead ? "signing keys: \(unread)" : signingKeys.isEmpty ? "signing keys: none (publishers: `odr signing-key new NAME`)" : "signing keys:")
    // A hybrid key (2,664 characters) is named short; `odr signing-key public NAME` prints it whole.
    lines += signingKeys.map { "  \($0.name)  \(VerifyingKey.shortDescription(of: $0.publicKey))" }
    lines.append(bundles.isEmpty ? "trusted bundles: none yet" : "trusted bundles:")
    lines += bundles.map { bundle in
      let who = bundle.signed ? "signed by \(bundle.signers.joined(separator: ", "))" : "unsigned"
      return "  \(bundle.bundle)  \(who)\(bundle.version.map { ", version \($0)" } ?? "")  (state: \(bundle.state))"
    }
    if let catalog {
      let what = catalog.bundle.map { bundle in
        "\(bundle) version \(catalog.version ?? 0)" + (catalog.expiresInDays.map { ", expires in \($0) day\($0 == 1 ? "" : "s")" } ?? ", no expiry")
      } ?? "not fetched yet"
      lines.append("catalog: \(catalog.locations.joined(separator: ", ")): \(what)")
    } else {
      lines.append("catalog: none configured (--catalog, ODR_CATALOG or odr.json)")
    }
    lines += services.map { "keys: \($0.service) holds \($0.keys) key\($0.keys == 1 ? "" : "s")" }
    lines += notes.map { "note: \($0)" }
    return lines.map { Output.oneLine($0) }
  }
}
