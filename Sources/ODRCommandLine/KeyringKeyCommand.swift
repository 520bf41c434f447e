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

    static func keyring(_ kind: KeyStoreKind, _ context: CommandContext) throws -> PrivateKeyring {
      PrivateKeyring(store: try StoreOptions.privateStore(Key.service, kind: kind, timeout: StoreOptions.defaultTimeout, context))
    }

    /// The key `name`; when there is none, the message names the closest
    /// one kept (a typo) or says how to make it.
    static func key(named name: String, in kind: KeyStoreKind, _ context: CommandContext) async throws -> Key {
      let keyring = try keyring(kind, context)
      do { return try Key(try await keyring.secret(named: name)) } catch let error as KeyringError where error.code == .notFound {
        let command = Key.texts.command
        // the names only serve a suggestion: without them, the advice stands
        let names = await droppingAsync(.bestEffort) { try await keyring.store.names() } ?? []
        let kept = names.isEmpty ? "none is kept here" : "kept: \(names.joined(separator: ", "))"
        if names.isEmpty, kind == .kernel {
          throw KeyringError(.notFound, "No \(Key.texts.noun) '\(name)': the kernel keyring holds none, and it is emptied at reboot. Import it again from your copy (`odr \(command) import \(name) --store kernel < FILE`), or make a new one (`odr \(command) new \(name) --store kernel`).")
        }
        if let close = NameSuggestion.closest(to: name, among: names) {
          throw KeyringError(.notFound, "No \(Key.texts.noun) '\(name)' (\(kept)). Did you mean '\(close)'?")
        }
        throw KeyringError(.notFound, "No \(Key.texts.noun) '\(name)' (\(kept)). `odr \(command) list` shows them; `odr \(command) new \(name)` makes one.")
      }
    }

    /// Says, when `kind` is the kernel keyring, that it is emptied at
    /// reboot and how to keep a copy.
    static func warnOfReboot(_ name: String, in kind: KeyStoreKind, _ context: CommandContext) {
      guard kind == .kernel else { return }
      context.output.error("note: the kernel keyring is emptied at reboot, and '\(name)' with it: keep a copy where your secrets live (`odr \(Key.texts.command) export \(name) -o FILE`, a 0600 file) to import at boot")
    }

    struct New: ContextualCommand {
      static var configuration: CommandConfiguration { Key.texts.new.configuration(name: "new") }
      @Argument(help: ArgumentHelp(Key.texts.name)) var name: String
      @OptionGroup var place: PrivateStoreOption
      @Flag(name: [.customLong("pq"), .customLong("post-quantum")], help: ArgumentHelp(Key.texts.postQuantum))
      var pq = false

      func run(_ context: CommandContext) async throws {
        let key = try Key.generate(postQuantum: pq)
        try await keyring(try place.kind(context), context).add(key.secretKeyString, as: name)
        context.output.write("\(key.publicText)\n")
        context.output.error("created \(key.kindName) \(Key.texts.noun) '\(name)'")
        KeyringKeyCommand.warnOfReboot(name, in: try place.kind(context), context)
      }
    }

    struct Public: ContextualCommand {
      static var configuration: CommandConfiguration { Key.texts.public.configuration(name: Key.texts.publicCommand) }
      @Argument(help: ArgumentHelp(Key.texts.name), completion: Completions.privateKeys(service: Key.service)) var name: String
      @OptionGroup var place: PrivateStoreOption

      func run(_ context: CommandContext) async throws {
        context.output.write("\(try await key(named: name, in: try place.kind(context), context).publicText)\n")
      }
    }

    struct Export: ContextualCommand {
      static var configuration: CommandConfiguration { Key.texts.export.configuration(name: "export") }
      @Argument(help: ArgumentHelp(Key.texts.name), completion: Completions.privateKeys(service: Key.service)) var name: String
      @OptionGroup var place: PrivateStoreOption
      @Option(name: .shortAndLong, help: ArgumentHelp("Write it to this file instead (mode 0600, written atomically, never over an existing file without --force).", valueName: "file"), completion: .file())
      var output: String?
      @Flag(help: "Print the private key even on a terminal (where it stays in the scrollback and any recording); with -o, replace an existing file.")
      var force = false

      func run(_ context: CommandContext) async throws {
        if output == nil && context.output.stdoutIsTerminal && !force {
          throw ValidationError("This prints a private key. Pipe it where it goes (`… export \(name) | gh secret set …`), write it to a 0600 file with -o FILE, or pass --force to show it on this terminal.")
        }
        let exported = try await key(named: name, in: try place.kind(context), context).exported
        guard let output else { return context.output.write(exported) }
        try SecretFile.write(exported, to: context.path(output), force: force)
        context.output.error("wrote \(Key.texts.noun) '\(name)' to \(output) (mode 0600)")
      }
    }

    struct Import: ContextualCommand {
      static var configuration: CommandConfiguration { Key.texts.import.configuration(name: "import") }
      @Argument(help: ArgumentHelp(Key.texts.name)) var name: String
      @OptionGroup var place: PrivateStoreOption

      func run(_ context: CommandContext) async throws {
        let key = try Key.imported(try SecretInput.read(prompt: Key.texts.importPrompt, keepNewline: false, context))
        try await keyring(try place.kind(context), context).add(key.secretKeyString, as: name)
        context.output.error("stored \(key.kindName) \(Key.texts.noun) '\(name)': \(key.publicText)")
        KeyringKeyCommand.warnOfReboot(name, in: try place.kind(context), context)
      }
    }

    struct List: ContextualCommand {
      static var configuration: CommandConfiguration { Key.texts.list.configuration(name: "list") }

      @OptionGroup var place: PrivateStoreOption
      @OptionGroup var reporting: OutputOptions

      /// `--json`: each key's name and public half (null when unreadable).
      struct Entry: Encodable {
        let name: String
        @NullWhenAbsent var publicKey: String?
      }

      func run(_ context: CommandContext) async throws {
        let items = try await keyring(try place.kind(context), context).store.values(for: nil)
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
      @OptionGroup var place: PrivateStoreOption

      func run(_ context: CommandContext) async throws {
        guard try await keyring(try place.kind(context), context).store.deleteValue(for: name) else {
          throw KeyringError(.notFound, "No \(Key.texts.noun) '\(name)' in the keyring (`odr \(Key.texts.command) list` shows them).")
        }
        context.output.error("deleted \(Key.texts.noun) '\(name)'")
      }
    }
  }
}
