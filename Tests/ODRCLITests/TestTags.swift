import Testing

extension Tag {
  /// Suites that are a load of their own: run only when asked (`ODR_TESTS`,
  /// ``TestSelection``).
  @Tag static var stress: Self
  /// Suites that time what they check: run apart from the crowd (``TestSelection``).
  @Tag static var timed: Self
}
