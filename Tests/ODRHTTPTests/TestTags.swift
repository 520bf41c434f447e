import Testing

extension Tag {
  /// Suites that time themselves in-process: scripts/test runs them apart,
  /// with no other test loading the cores (``TestSelection``).
  @Tag static var timed: Self
}
