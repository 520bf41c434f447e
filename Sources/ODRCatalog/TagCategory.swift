/// When a tag is fetched, as in Apple's On-Demand Resources.
public enum TagCategory: String, Codable, Sendable, CaseIterable, Comparable {
  /// Fetched first by `odr prefetch` (Apple: initial install tags).
  case initial
  /// Fetched by `odr prefetch` after the initial tags, in `order`.
  case prefetch
  /// Fetched only when a request asks for it.
  case onDemand

  public static func < (a: TagCategory, b: TagCategory) -> Bool {
    allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
  }
}
