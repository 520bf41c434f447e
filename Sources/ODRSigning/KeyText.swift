/// How messages mention key text a user gave (`--trust`, `--recipient`,
/// a recipients file, `ODR_TRUST`, odr.json `"trust"`, `--next-signer`):
/// never by quoting it. A private key pasted where a public one belongs
/// must not reach the terminal or a CI log, and any long key-like string
/// might be one; the description says only its length and, when it starts
/// with a public key's prefix, that prefix.
public enum KeyText {
  /// A description of `text` that quotes none of its key material.
  public static func describe(_ text: String) -> String {
    if looksPrivate(text) { return "a private key (not shown)" }
    let prefix = ["ed25519:", "ed25519-mldsa65:", "age1pq1", "age1", "ssh-ed25519 ", "ssh-rsa "].first { text.hasPrefix($0) }
    return "a value of \(text.count) character\(text.count == 1 ? "" : "s")\(prefix.map { " starting '\($0.trimmed)'" } ?? "")"
  }

  /// True for text that names itself a private key: age identities,
  /// exported signing keys, PEM/OpenSSH private key blocks.
  public static func looksPrivate(_ text: String) -> Bool {
    let upper = text.uppercased()
    return upper.contains("SECRET") || upper.contains("PRIVATE")
  }
}
