/// An optional that `--json` shows as `null` when it is absent, instead of
/// leaving its key out: every key of odr's JSON is always there (docs/json.md).
@propertyWrapper
public struct NullWhenAbsent<Value: Encodable & Sendable>: Encodable, Sendable {
  public var wrappedValue: Value?

  public init(wrappedValue: Value?) {
    self.wrappedValue = wrappedValue
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
  }
}

extension NullWhenAbsent: Equatable where Value: Equatable {}
