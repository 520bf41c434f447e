import ArgumentParser
import ODRKeys
import ODRTrust

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
        odr identity export ci | gh secret set ODR_IDENTITY
      """,
    noun: "identity",
    name: "The identity's name.",
    publicCommand: "recipient",
    unreadable: "(not an age identity)",
    importPrompt: "Identity (AGE-SECRET-KEY-1…): ",
    new: .init(abstract: "Create an identity in the keyring and print its recipient (age1…).", example: "odr identity new laptop"),
    public: .init(abstract: "Print an identity's recipient (age1…), to send to the publisher.", example: "odr identity recipient laptop"),
    export: .init(abstract: "Print the identity as an age identity file (for a CI secret store, or `age -d -i`). Handle it like a password.",
                  example: "odr identity export ci | gh secret set ODR_IDENTITY"),
    import: .init(abstract: "Store an identity (AGE-SECRET-KEY-1…, or an identity file holding one) read from standard input.",
                  example: "odr identity import laptop < key.txt"),
    list: .init(abstract: "List the identities in the keyring with their recipients.", example: "odr identity list"),
    delete: .init(abstract: "Delete an identity from the keyring (packs encrypted only to it can no longer be read here).",
                  example: "odr identity delete old-laptop"))

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
