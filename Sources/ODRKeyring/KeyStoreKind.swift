/// The stores odr keeps keys in (`--store`, `ODR_STORE`, odr.json `"store"`).
public enum KeyStoreKind: String, Sendable, CaseIterable {
  /// The desktop keyring through the Secret Service (``SecretServiceStore``).
  case secretService = "secret-service"
  /// The Linux kernel's keyring (``KernelKeyringStore``).
  case kernel
  /// This process's memory (``MemoryStore``).
  case memory

  /// The store as a message names it ("in the keyring").
  public var phrase: String {
    switch self {
    case .secretService: "the keyring"
    case .kernel: "the kernel keyring"
    case .memory: "this process's memory store"
    }
  }
}
