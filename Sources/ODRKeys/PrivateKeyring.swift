import ODRBase
import FoundationEssentials
public import ODRAge
public import ODRKeyring
import ODRSigning

/// The private keys odr keeps in the keyring, never on disk: age identities
/// (service `odr.identity`) and catalog signing keys (service
/// `odr.signing-key`), one item per name, holding the exported text form.
public struct PrivateKeyring: Sendable {
  /// The keyring service of age identities.
  public static let identityService = "odr.identity"
  /// The keyring service of catalog signing keys.
  public static let signingKeyService = "odr.signing-key"

  /// The store of one kind (its service is one of the two above).
  public let store: any SecretStore

  public init(store: any SecretStore) {
    self.store = store
  }

  /// Stores `secret` under `name`; refuses to replace an existing one, so
  /// a typo cannot destroy a key (delete it first).
  public func add(_ secret: String, as name: String) async throws {
    try KeyringInput.validate(name: name)
    // Only "not found" means the name is free: a locked or silent keyring
    // is its own error, never a licence to write.
    do {
      _ = try await store.value(for: name)
      throw KeyringError(.invalidInput, "'\(name)' already exists in \(store.service); pick another name, or delete it first (this cannot be undone).")
    } catch let error as KeyringError where error.code == .notFound {}
    try await store.setValue(secret, for: name)
  }

  /// The secret stored under `name` (KeyringError `.notFound` when none).
  public func secret(named name: String) async throws -> String {
    try await store.value(for: name)
  }

  /// Every age identity kept here. An item that is not an identity is an
  /// error that names it: skipping it would leave its owner with "not a
  /// recipient" and no clue.
  public func identities() async throws -> [AgeIdentity] {
    try await store.values(for: nil).sorted { $0.key < $1.key }.flatMap { name, value in
      do { return try AgeIdentity.parseFile(value) } catch let error as TrustError {
        throw TrustError(.invalidKey, "The identity '\(name)' in the keyring (\(store.service)) is not an age identity: \(error.message) Delete it (`odr identity delete \(name)`) or import it again (`odr identity import \(name)`).")
      }
    }
  }
}

extension PrivateKeyring {
  /// The identities a client decrypts with: those in `ODR_IDENTITY`
  /// (`environment`: one or more `AGE-SECRET-KEY-1…` or
  /// `AGE-SECRET-KEY-PQ-1…`, newline-separated, or an unencrypted OpenSSH
  /// ssh-ed25519 or ssh-rsa private key) and
  /// in identity files when any is given — then the keyring is not asked,
  /// which suits CI; otherwise every identity in the keyring.
  public static func identities(environment: String?, files: [String], keyring: () throws -> any SecretStore) async throws -> [AgeIdentity] {
    var found: [AgeIdentity] = []
    if let environment {
      let lines = environment.split(whereSeparator: \.isNewline).map { $0.filter { $0 != " " && $0 != "\t" } }.filter { !$0.isEmpty }
      guard !lines.isEmpty else {
        throw TrustError(.invalidKey, "ODR_IDENTITY is set but empty (a secret this job cannot see? forks' pull requests get no secrets). Set it to the identity (AGE-SECRET-KEY-1…), or unset it to use the keyring.")
      }
      // A CI secret may carry stray white space; the key lines are strict.
      // An OpenSSH key file is read whole (its boundary lines have spaces).
      let text = environment.contains("-----BEGIN") ? environment : lines.joined(separator: "\n")
      do { found += try AgeIdentity.parseFile(text) } catch let error as TrustError {
        throw TrustError(error.code, "ODR_IDENTITY: \(error.message)", underlying: error)
      }
    }
    for path in files {
      guard let data = FileManager.default.contents(atPath: path) else {
        throw KeyringError(.notFound, "Cannot read the identity file '\(path)'.")
      }
      do { found += try AgeIdentity.parseFile(String(decoding: data, as: UTF8.self)) } catch let error as TrustError {
        throw TrustError(error.code, "\(path): \(error.message)", underlying: error)
      }
    }
    if environment?.isEmpty == false || !files.isEmpty { return found }
    do { return try await PrivateKeyring(store: try keyring()).identities() } catch let error as KeyringError
      where [.noLibrary, .noSessionBus, .noProvider, .noDefaultCollection].contains(error.code) {
      return []  // no keyring at all: the caller says that no identity was found
    }
  }
}
