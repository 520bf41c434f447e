import Testing

extension Tag {
  /// Suites that are a load of their own: run only when asked (`ODR_TESTS`,
  /// ``TestSelection``).
  @Tag static var stress: Self
}
