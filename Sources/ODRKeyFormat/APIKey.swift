/// One API key: its name, its value and its metadata.
///
/// The value never appears in `description`, `debugDescription` or a
/// `dump`: they show `<redacted>`.
public struct APIKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
  public let name: String
  public let value: String
  public let metadata: KeyMetadata

  public init(name: String, value: String, metadata: KeyMetadata = KeyMetadata()) {
    self.name = name
    self.value = value
    self.metadata = metadata
  }

  public var description: String { "APIKey(\(name), value: <redacted>)" }
  public var debugDescription: String { description }
  public var customMirror: Mirror {
    Mirror(self, children: ["name": name, "value": "<redacted>", "metadata": metadata])
  }
}
