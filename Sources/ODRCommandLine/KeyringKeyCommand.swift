import ArgumentParser
import ODRBase
import ODRCatalog
import ODRKeyring
import ODRKeys

extension ODR {
  /// `odr identity …` and `odr signing-key …`: the same six subcommands
  /// (new, its public half, export, import, list, delete) over one kind of
  /// private key kept in the keyring, never on disk.
  struct KeyringKeyCommand<Key: KeyringKey>: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
      CommandConfiguration(
        commandName: Key.texts.command, abstract: Key.texts.abstract, discussion: Key.texts.discussion,
        subcommands: [New.self, Public.self, Export.self, Import.self, List.self, Delete.self])
    }

    static func keyring(_ context: CommandContext) throws -> PrivateKeyring {
      // $ODR_STORE (or odr.json "store"): a server's keys live in the kernel keyring.
      PrivateKeyring(store: try StoreOptions.privateStore(Key.service, kind: StoreOptions.configuredKind(context), timeout: StoreOptions.defaultTimeout, context))
    }

    /// The key `name`; when there is none, the message names the closest
    /// one kept (a typo) or says how to make it.
    static func key(named name: String, _ context: CommandContext) async throws -> Key {
      let keyring = try keyring(context)
      do { return try Key(try await keyring.secret(named: name)) } catch let error as KeyringError where error.code == .notFound {
        let command = Key.texts.command
        // the names only serve a suggestion: without them, the advice stands
        let names = await droppingAsync(.bestEffort) { try await keyring.store.names() } ?? []
        let kept = names.isEmpty ? "none is kept here" : "kept: \(names.joined(separator: ", "))"
        if let close = NameSuggestion.closest(to: name, among: names) {
          throw KeyringError(.notFound, "No \(Key.texts.noun) '\(name)' (\(kept)). Did you mean '\(close)'?")
        }
        throw KeyringError(.notFound, "No \(Key.texts.noun) '\(name)' (\(kept)). `odr \(command) list` shows them; `odr \(command) new \(name)` makes one.")
      }
    }

    struct New: ContextualCommand {
      static var configuration: CommandConfiguration { Key.texts.new.configuration(name: "new") }
      @Argument(help: ArgumentHelp(Key.texts.name)) var name: String
      @Flag(help: ArgumentHelp("Make a hybrid post-quantum identity (ML-KEM-768 + X25519, age1pq1…): packs encrypted to it stay closed to whoever records them now and breaks X25519 later. Every recipient of a pack must then be post-quantum.",
                               visibility: Key.hasPostQuantumKind ? .default : .private))
      var pq = false

      func run(_ context: CommandContext) async throws {
        guard !pq || Key.hasPostQuantumKind else { throw ValidationError("--pq applies to identities; signing keys are Ed25519.") }
        let key = try Key.generate(postQuantum: pq)
        try await keyring(context).add(key.secretKeyString, as: name)
        context.output.write("\(key.publicText)\n")
        context.output.error("created \(key.kindName) \(Key.texts.noun) '\(name)'")
      }
    }

    struct Public: ContextualCommand {
      static var configuration: CommandConfiguration { Key.texts.public.configuration(name: Key.texts.publicCommand) }
      @Argument(help: ArgumentHelp(Key.texts.name), completion: Completions.privateKeys(service: Key.service)) var name: String

      func run(_ context: CommandContext) async throws {
        context.output.write("\(try await key(named: name, context).publicText)\n")
      }
    }

    struct Export: ContextualCommand {
      static var configuration: CommandConfiguration { Key.texts.export.configuration(name: "export") }
      @Argument(help: ArgumentHelp(Key.texts.name), completion: Completions.privateKeys(service: Key.service)) var name: String
      @Flag(help: "Print the private key even on a terminal (where it stays in the scrollback and any recording).")
      var force = false

      func run(_ context: CommandContext) async throws {
        if context.output.stdoutIsTerminal && !force {
          throw ValidationError("This prints a private key. Pipe it where it goes (`… export \(name) | gh secret set …`), or pass --force to show it on this terminal.")
        }
        context.output.write(try await key(named: name, context).exported)
      }
    }

    struct Import: ContextualCommand {
      static var configuration: CommandConfiguration { Key.texts.import.configuration(name: "import") }
      @Argument(help: ArgumentHelp(Key.texts.name)) var name: String

      func run(_ context: CommandContext) async throws {
        let key = try Key.imported(try SecretInput.read(prompt: Key.texts.importPrompt, keepNewline: false, context))
        try await keyring(context).add(key.secretKeyString, as: name)
        context.output.error("stored \(key.kindName) \(Key.texts.noun) '\(name)': \(key.publicText)")
      }
    }

    struct List: ContextualCommand {
      static var configuration: CommandConfiguration { Key.texts.list.configuration(name: "list") }

      @OptionGroup var reporting: OutputOptions

      /// `--json`: each key's name and public half (null when unreadable).
      struct Entry: Encodable {
        let name: String
        @NullWhenAbsent var publicKey: String?
      }

      func run(_ context: CommandContext) async throws {
        let items = try await keyring(context).store.values(for: nil)
        // a damaged item is listed as unreadable, not hidden
        let entries = items.sorted { $0.key < $1.key }.map { name, secret in Entry(name: name, publicKey: dropping(.isTheAnswer) { try Key(secret) }?.publicText) }
        try reporting.print(entries, on: context.output) {
          var table = TextTable(header: ["NAME", Key.texts.publicCommand.uppercased()])
          table.rows = entries.map { [$0.name, $0.publicKey ?? Key.texts.unreadable] }
          table.write(to: context.output)
        }
      }
    }

    struct Delete: ContextualCommand {
      static var configuration: CommandConfiguration { Key.texts.delete.configuration(name: "delete") }
      @Argument(help: ArgumentHelp(Key.texts.name), completion: Completions.privateKeys(service: Key.service)) var name: String

      func run(_ context: CommandContext) async throws {
        guard try await keyring(context).store.deleteValue(for: name) else {
          throw KeyringError(.notFound, "No \(Key.texts.noun) '\(name)' in the keyring (`odr \(Key.texts.command) list` shows them).")
        }
        context.output.error("deleted \(Key.texts.noun) '\(name)'")
      }
    }
  }
}
