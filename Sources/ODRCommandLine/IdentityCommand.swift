import ArgumentParser
import ODRKeyring
import ODRKeys
import ODRTrust

extension ODR {
  /// `odr identity new|recipient|export|import|list|delete NAME`: this
  /// machine's age identities, kept in the keyring.
  struct IdentityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "identity",
      abstract: "Manage this machine's age identities (the keys that open encrypted secrets tags), kept in the keyring.",
      discussion: """
        `new` prints the identity's recipient (age1…): send it to the publisher, who adds it to the secrets tag's recipients. `odr fetch` then decrypts with every identity in the keyring. A machine without a keyring (CI) passes an exported identity in ODR_IDENTITY or --identity-file instead.

        Example:
          odr identity new laptop
          odr identity export ci | gh secret set ODR_IDENTITY
        """,
      subcommands: [New.self, Recipient.self, Export.self, Import.self, List.self, Delete.self]
    )

    static func keyring() throws -> PrivateKeyring {
      PrivateKeyring(store: try SecretServiceStore(service: PrivateKeyring.identityService))
    }

    static func identity(_ name: String) async throws -> AgeIdentity {
      try AgeIdentity(try await keyring().secret(named: name))
    }

    struct New: AsyncParsableCommand {
      static let configuration = CommandConfiguration(
        commandName: "new",
        abstract: "Create an identity in the keyring and print its recipient (age1…).",
        discussion: "Example:\n  odr identity new laptop")
      @Argument(help: "The identity's name.") var name: String

      func run() async throws {
        let identity = AgeIdentity()
        try await IdentityCommand.keyring().add(identity.secretKeyString, as: name)
        Output.write("\(identity.recipient)\n")
      }
    }

    struct Recipient: AsyncParsableCommand {
      static let configuration = CommandConfiguration(
        commandName: "recipient",
        abstract: "Print an identity's recipient (age1…), to send to the publisher.",
        discussion: "Example:\n  odr identity recipient laptop")
      @Argument(help: "The identity's name.") var name: String

      func run() async throws {
        Output.write("\(try await IdentityCommand.identity(name).recipient)\n")
      }
    }

    struct Export: AsyncParsableCommand {
      static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Print the identity as an age identity file (for a CI secret store, or `age -d -i`). Handle it like a password.",
        discussion: "Example:\n  odr identity export ci | gh secret set ODR_IDENTITY")
      @Argument(help: "The identity's name.") var name: String

      func run() async throws {
        Output.write(try await IdentityCommand.identity(name).fileText)
      }
    }

    struct Import: AsyncParsableCommand {
      static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Store an identity (AGE-SECRET-KEY-1…, or an identity file holding one) read from standard input.",
        discussion: "Example:\n  odr identity import laptop < key.txt")
      @Argument(help: "The identity's name.") var name: String

      func run() async throws {
        let identities = try AgeIdentity.parseFile(try SecretInput.read(prompt: "Identity (AGE-SECRET-KEY-1…): ", keepNewline: false))
        guard identities.count == 1, let identity = identities.first else {
          throw ValidationError("Standard input holds \(identities.count) identities; import exactly one per name.")
        }
        try await IdentityCommand.keyring().add(identity.secretKeyString, as: name)
        Output.error("stored identity '\(name)': \(identity.recipient)")
      }
    }

    struct List: AsyncParsableCommand {
      static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the identities in the keyring with their recipients.",
        discussion: "Example:\n  odr identity list")

      func run() async throws {
        let items = try await IdentityCommand.keyring().store.values(for: nil)
        Output.write(items.sorted { $0.key < $1.key }.map { name, secret in
          "\(name)\t\((try? AgeIdentity(secret))?.recipient.description ?? "(not an age identity)")\n"
        }.joined())
      }
    }

    struct Delete: AsyncParsableCommand {
      static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete an identity from the keyring (packs encrypted only to it can no longer be read here).",
        discussion: "Example:\n  odr identity delete old-laptop")
      @Argument(help: "The identity's name.") var name: String

      func run() async throws {
        guard try await IdentityCommand.keyring().store.deleteValue(for: name) else {
          throw KeyringError(.notFound, "No identity '\(name)' in the keyring (`odr identity list` shows them).")
        }
        Output.error("deleted identity '\(name)'")
      }
    }
  }
}
