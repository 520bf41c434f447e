import ArgumentParser
import ODRAge
import ODRKeys

/// `odr identity`: this machine's age identities.
extension AgeIdentity: KeyringKey {
  static var service: String { PrivateKeyring.identityService }

  static let texts = KeyringKeyTexts(
    command: "identity",
    abstract: "Manage this machine's age identities (the keys that open encrypted secrets tags), kept in the keyring.",
    discussion: """
      `new` prints the identity's recipient (age1…): send it to the publisher, who adds it to the secrets tag's recipients. `odr fetch` then decrypts with every identity in the keyring. A machine without a keyring (CI) passes an exported identity in ODR_IDENTITY or --identity-file instead.

      Example:
        odr identity new laptop
        odr identity new laptop-pq --pq
        odr identity export ci | gh secret set ODR_IDENTITY

      An identity is X25519 (age1…) or, with --pq, hybrid post-quantum ML-KEM-768 + X25519 (age1pq1…); a pack is encrypted to one kind only. An unencrypted OpenSSH ssh-ed25519 or ssh-rsa key can also be imported, or passed in --identity-file / ODR_IDENTITY.
      """,
    noun: "identity",
    name: "The identity's name.",
    publicCommand: "recipient",
    unreadable: "(not an age identity)",
    importPrompt: "Identity (AGE-SECRET-KEY-1… or AGE-SECRET-KEY-PQ-1…): ",
    postQuantum: "Make a hybrid post-quantum identity (ML-KEM-768 + X25519, age1pq1…): packs encrypted to it stay closed to whoever records them now and breaks X25519 later. Every recipient of a pack must then be post-quantum.",
    new: .init(abstract: "Create an identity in the keyring and print its recipient (age1…, or age1pq1… with --pq).", example: "odr identity new laptop --pq"),
    public: .init(abstract: "Print an identity's recipient (age1…, age1pq1… or ssh-…), to send to the publisher.", example: "odr identity recipient laptop"),
    export: .init(abstract: "Print the identity as an age identity file (for a CI secret store, or `age -d -i`). Handle it like a password.",
                  example: "odr identity export ci | gh secret set ODR_IDENTITY"),
    import: .init(abstract: "Store an identity (AGE-SECRET-KEY-1…, AGE-SECRET-KEY-PQ-1…, an identity file holding one, or an unencrypted OpenSSH ssh-ed25519 or ssh-rsa private key) read from standard input.",
                  example: "odr identity import laptop < key.txt"),
    list: .init(abstract: "List the identities in the keyring with their recipients.", example: "odr identity list"),
    delete: .init(abstract: "Delete an identity from the keyring (packs encrypted only to it can no longer be read here).",
                  example: "odr identity delete old-laptop"))

  static func generate(postQuantum: Bool) throws -> AgeIdentity { try AgeIdentity(postQuantum: postQuantum) }

  static func imported(_ text: String) throws -> AgeIdentity {
    let identities = try parseFile(text)
    guard identities.count == 1, let identity = identities.first else {
      throw ValidationError("Standard input holds \(identities.count) identities; import exactly one per name.")
    }
    return identity
  }

  var exported: String { fileText }
  var publicText: String { recipient.description }
}
