
/// A kind of private key odr keeps in the keyring: age identities
/// (`odr identity`) and signing keys (`odr signing-key`), both managed by
/// ``ODR/KeyringKeyCommand``.
protocol KeyringKey: Sendable {
  /// The keyring service the keys are kept under.
  static var service: String { get }
  /// The command's name and help texts.
  static var texts: KeyringKeyTexts { get }
  /// A new random key, post-quantum when asked.
  static func generate(postQuantum: Bool) throws -> Self
  /// What kind of key this is, for people ("X25519", "Ed25519", …).
  var kindName: String { get }
  /// A key from its stored text.
  init(_ text: String) throws
  /// A key from what `import` reads on stdin.
  static func imported(_ text: String) throws -> Self
  /// The text kept in the keyring.
  var secretKeyString: String { get }
  /// What `export` prints.
  var exported: String { get }
  /// The public half, printed by `new`, listed, and sent to others.
  var publicText: String { get }
}
