public import ArgumentParser
public import ODRKeyring

/// `--store secret-service|kernel` (memory parses, and is refused with why).
extension KeyStoreKind: ExpressibleByArgument {}
