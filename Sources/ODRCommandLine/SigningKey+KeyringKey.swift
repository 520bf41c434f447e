import ODRKeys
import ODRSigning

/// `odr signing-key`: the publisher's Ed25519 catalog signing keys.
extension SigningKey: KeyringKey {
  static var service: String { PrivateKeyring.signingKeyService }

  static let texts = KeyringKeyTexts(
    command: "signing-key",
    abstract: "Manage catalog signing keys (Ed25519), kept in the keyring, never on disk.",
    discussion: """
      A publisher signs catalogs with `odr pack --sign NAME`; clients pin the public key (ed25519:…) with --trust, ODR_TRUST or "trust" in odr.json. For CI, `export` prints the private key for a secret store; the job passes it in ODR_SIGNING_KEY.

      Example:
        odr signing-key new release
        odr signing-key export release | gh secret set ODR_SIGNING_KEY
      """,
    noun: "signing key",
    name: "The key's name.",
    publicCommand: "public",
    unreadable: "(not a signing key)",
    importPrompt: "Signing key (ed25519-secret:…): ",
    new: .init(abstract: "Create a signing key in the keyring and print its public key.", example: "odr signing-key new release"),
    public: .init(abstract: "Print a signing key's public key (what clients pin with --trust).", example: "odr signing-key public release"),
    export: .init(abstract: "Print the private key (ed25519-secret:…) for a CI secret store. Handle it like a password.",
                  example: "odr signing-key export release | gh secret set ODR_SIGNING_KEY"),
    import: .init(abstract: "Store an exported private key, read from standard input.", example: "odr signing-key import release < release.key"),
    list: .init(abstract: "List the signing keys in the keyring with their public keys.", example: "odr signing-key list"),
    delete: .init(abstract: "Delete a signing key from the keyring (it cannot be recovered).", example: "odr signing-key delete old-release"))

  static let hasPostQuantumKind = false

  static func generate(postQuantum: Bool) throws -> SigningKey { SigningKey() }

  var kindName: String { "Ed25519" }

  static func imported(_ text: String) throws -> SigningKey { try SigningKey(text) }

  var exported: String { secretKeyString + "\n" }
  var publicText: String { verifyingKey.description }
}
