import ODRKeys
import ODRSigning

/// `odr signing-key`: the publisher's catalog signing keys, Ed25519 or
/// hybrid Ed25519 + ML-DSA-65.
extension SigningKey: KeyringKey {
  static var service: String { PrivateKeyring.signingKeyService }

  static let texts = KeyringKeyTexts(
    command: "signing-key",
    abstract: "Manage catalog signing keys (Ed25519, or post-quantum Ed25519 + ML-DSA-65), kept in the keyring, never on disk.",
    discussion: """
      A publisher signs catalogs with `odr pack --sign NAME`; clients pin the public key (ed25519:… or ed25519-mldsa65:…) with --trust, ODR_TRUST or "trust" in odr.json. For CI, `export` prints the private key for a secret store; the job passes it in ODR_SIGNING_KEY.

      Example:
        odr signing-key new release
        odr signing-key new release-pq --post-quantum
        odr signing-key export release | gh secret set ODR_SIGNING_KEY

      A key is Ed25519 or, with --post-quantum, hybrid Ed25519 + ML-DSA-65 (FIPS 204): its signatures verify only if both halves do, and a client that pins it accepts nothing less. Moving a published bundle to one is in docs/trust.md, "Moving to post-quantum signatures".
      """,
    noun: "signing key",
    name: "The key's name.",
    publicCommand: "public",
    unreadable: "(not a signing key)",
    importPrompt: "Signing key (ed25519-secret:… or ed25519-mldsa65-secret:…): ",
    postQuantum: "Make a hybrid post-quantum signing key (Ed25519 + ML-DSA-65, ed25519-mldsa65:…): catalogs it signs (format 3) verify only if both signatures do, so a forger who breaks Ed25519 later still cannot sign.",
    new: .init(abstract: "Create a signing key in the keyring and print its public key.", example: "odr signing-key new release"),
    public: .init(abstract: "Print a signing key's public key (what clients pin with --trust).", example: "odr signing-key public release"),
    export: .init(abstract: "Print the private key (ed25519-secret:… or ed25519-mldsa65-secret:…) for a CI secret store. Handle it like a password.",
                  example: "odr signing-key export release | gh secret set ODR_SIGNING_KEY"),
    import: .init(abstract: "Store an exported private key, read from standard input.", example: "odr signing-key import release < release.key"),
    list: .init(abstract: "List the signing keys in the keyring with their public keys.", example: "odr signing-key list"),
    delete: .init(abstract: "Delete a signing key from the keyring (it cannot be recovered).", example: "odr signing-key delete old-release"))

  static func generate(postQuantum: Bool) throws -> SigningKey { try SigningKey(postQuantum: postQuantum) }

  var kindName: String { isPostQuantum ? "post-quantum (Ed25519 + ML-DSA-65)" : "Ed25519" }

  static func imported(_ text: String) throws -> SigningKey { try SigningKey(text) }

  var exported: String { secretKeyString + "\n" }
  var publicText: String { verifyingKey.description }
}
