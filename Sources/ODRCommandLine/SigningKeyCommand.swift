import ArgumentParser
import ODRKeyring
import ODRKeys
import ODRTrust

extension ODR {
  /// `odr signing-key new|public|export|import|list|delete NAME`: the
  /// publisher's Ed25519 keys, kept in the keyring.
  struct SigningKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "signing-key",
      abstract: "Manage catalog signing keys (Ed25519), kept in the keyring, never on disk.",
      discussion: """
        A publisher signs catalogs with `odr pack --sign NAME`; clients pin the public key (ed25519:…) with --trust, ODR_TRUST or "trust" in odr.json. For CI, `export` prints the private key for a secret store; the job passes it in ODR_SIGNING_KEY.

        Example:
          odr signing-key new release
          odr signing-key export release | gh secret set ODR_SIGNING_KEY
        """,
      subcommands: [New.self, Public.self, Export.self, Import.self, List.self, Delete.self]
    )

    static func keyring() throws -> PrivateKeyring {
      PrivateKeyring(store: try SecretServiceStore(service: PrivateKeyring.signingKeyService))
    }

    struct New: AsyncParsableCommand {
      static let configuration = CommandConfiguration(
        commandName: "new",
        abstract: "Create a signing key in the keyring and print its public key.",
        discussion: "Example:\n  odr signing-key new release")
      @Argument(help: "The key's name.") var name: String

      func run() async throws {
        let key = SigningKey()
        try await SigningKeyCommand.keyring().add(key.secretKeyString, as: name)
        Output.write("\(key.verifyingKey)\n")
      }
    }

    struct Public: AsyncParsableCommand {
      static let configuration = CommandConfiguration(
        commandName: "public",
        abstract: "Print a signing key's public key (what clients pin with --trust).",
        discussion: "Example:\n  odr signing-key public release")
      @Argument(help: "The key's name.") var name: String

      func run() async throws {
        Output.write("\(try SigningKey(try await SigningKeyCommand.keyring().secret(named: name)).verifyingKey)\n")
      }
    }

    struct Export: AsyncParsableCommand {
      static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Print the private key (ed25519-secret:…) for a CI secret store. Handle it like a password.",
        discussion: "Example:\n  odr signing-key export release | gh secret set ODR_SIGNING_KEY")
      @Argument(help: "The key's name.") var name: String

      func run() async throws {
        Output.write("\(try SigningKey(try await SigningKeyCommand.keyring().secret(named: name)).secretKeyString)\n")
      }
    }

    struct Import: AsyncParsableCommand {
      static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Store an exported private key, read from standard input.",
        discussion: "Example:\n  odr signing-key import release < release.key")
      @Argument(help: "The key's name.") var name: String

      func run() async throws {
        let key = try SigningKey(try SecretInput.read(prompt: "Signing key (ed25519-secret:…): ", keepNewline: false))
        try await SigningKeyCommand.keyring().add(key.secretKeyString, as: name)
        Output.error("stored signing key '\(name)': \(key.verifyingKey)")
      }
    }

    struct List: AsyncParsableCommand {
      static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the signing keys in the keyring with their public keys.",
        discussion: "Example:\n  odr signing-key list")

      func run() async throws {
        let items = try await SigningKeyCommand.keyring().store.values(for: nil)
        Output.write(items.sorted { $0.key < $1.key }.map { name, secret in
          "\(name)\t\((try? SigningKey(secret))?.verifyingKey.description ?? "(not a signing key)")\n"
        }.joined())
      }
    }

    struct Delete: AsyncParsableCommand {
      static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete a signing key from the keyring (it cannot be recovered).",
        discussion: "Example:\n  odr signing-key delete old-release")
      @Argument(help: "The key's name.") var name: String

      func run() async throws {
        guard try await SigningKeyCommand.keyring().store.deleteValue(for: name) else {
          throw KeyringError(.notFound, "No signing key '\(name)' in the keyring (`odr signing-key list` shows them).")
        }
        Output.error("deleted signing key '\(name)'")
      }
    }
  }
}
