public import ArgumentParser
public import ODRKeyring

/// `--store secret-service|kernel`; `memory` parses, and is refused with
/// why (StoreOptions.memoryRefusal), so help does not offer it.
extension KeyStoreKind: ExpressibleByArgument {
  public static var allValueStrings: [String] { [secretService.rawValue, kernel.rawValue] }
}
