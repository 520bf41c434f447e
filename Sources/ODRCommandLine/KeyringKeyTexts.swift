import ArgumentParser

/// What `odr identity` or `odr signing-key` and their subcommands say of
/// themselves: the help texts and the words messages use.
struct KeyringKeyTexts: Sendable {
  /// One subcommand's help: its abstract and one example.
  struct Subcommand: Sendable {
    let abstract: String
    let example: String

    func configuration(name: String) -> CommandConfiguration {
      CommandConfiguration(commandName: name, abstract: abstract, discussion: "Example:\n  \(example)")
    }
  }

  /// The command: `identity`, `signing-key`.
  let command: String
  let abstract: String
  let discussion: String
  /// What one is called in messages: "identity", "signing key".
  let noun: String
  /// The help of the NAME argument.
  let name: String
  /// The subcommand that prints the public half: `recipient`, `public`.
  let publicCommand: String
  /// What `list` shows for an item that does not parse.
  let unreadable: String
  /// What `import` asks for on a terminal.
  let importPrompt: String
  /// The help of `new --pq` (`--post-quantum`).
  let postQuantum: String
  let new, `public`, export, `import`, list, delete: Subcommand
}
