import ODRBase
import ODRKeyring

/// The store options the quick paths (QuickGet, QuickExec) take,
/// `--service ID` and `--timeout S`, read without ArgumentParser.
struct QuickStoreOptions: Equatable {
  private(set) var service: String?
  private(set) var timeout = StoreOptions.defaultTimeout

  /// Takes `argument` (and its value from `rest`) when it is one of these
  /// options: true when taken, false when it is not one of them, nil when
  /// it is given twice or its value is invalid (the full path says why).
  mutating func take(_ argument: String, from rest: inout ArraySlice<String>) -> Bool? {
    switch argument {
    case "--service":
      guard let value = rest.popFirst(), service == nil else { return nil }
      service = value
    case "--timeout":
      guard let value = rest.popFirst().flatMap(Double.init), StoreOptions.validTimeouts.contains(value) else { return nil }
      timeout = value
    default:
      return false
    }
    return true
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
