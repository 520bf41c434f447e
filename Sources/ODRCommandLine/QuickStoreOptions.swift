import FoundationEssentials
import ODRBase
import ODRConfiguration
import ODRKeyring

/// The store options the quick paths (QuickGet, QuickExec) take,
/// `--service ID`, `--store secret-service|kernel` and `--timeout S`, read
/// without ArgumentParser.
struct QuickStoreOptions: Equatable {
  private(set) var service: String?
  private(set) var store: KeyStoreKind?
  private(set) var timeout = StoreOptions.defaultTimeout

  /// Takes `argument` (and its value from `rest`) when it is one of these
  /// options: true when taken, false when it is not one of them, nil when
  /// it is given twice or its value is invalid (the full path says why).
  mutating func take(_ argument: String, from rest: inout ArraySlice<String>) -> Bool? {
    switch argument {
    case "--service":
      guard let value = rest.popFirst(), service == nil else { return nil }
      service = value
    case "--store":
      guard let value = rest.popFirst().flatMap(KeyStoreKind.init(rawValue:)), value != .memory, store == nil else { return nil }
      store = value
    case "--timeout":
      guard let value = rest.popFirst().flatMap(Double.init), StoreOptions.validTimeouts.contains(value) else { return nil }
      timeout = value
    default:
      return false
    }
    return true
  }

  /// `--store`, else `$ODR_STORE`, else the Secret Service when no
  /// odr.json could name another; nil: the full path finds it (odr.json)
  /// or says why not.
  func validStore(_ environment: [String: String], workingDirectory: URL) -> KeyStoreKind? {
    if let store { return store }
    if let name = environment["ODR_STORE"], !name.isEmpty {
      return KeyStoreKind(rawValue: name).flatMap { $0 == .memory ? nil : $0 }
    }
    let home = environment["HOME"].map { URL(filePath: $0) }
    return ProjectFile.locate(from: workingDirectory, home: home) == nil ? .secretService : nil
  }

  /// `--service`, else `$ODR_SERVICE`, if it is a valid service for keys
  /// (nil: the full path finds or refuses it and says why).
  func validService(_ environment: [String: String]) -> String? {
    guard let service = service ?? environment["ODR_SERVICE"].flatMap({ $0.isEmpty ? nil : $0 }),
          dropping(.isTheAnswer, { try KeyringInput.validate(keyService: service) }) != nil
    else { return nil }
    return service
  }
}
