import Foundation

/// Which groups of tests run, chosen by `ODR_TESTS` (comma-separated):
/// `untagged` (every suite without a tag below), `timed` (suites that time
/// themselves in-process: they run apart, with no other test loading the
/// cores), `stress` (suites that are a load of their own, tens of seconds).
/// Unset: `untagged,timed`, so a plain `swift test` runs all but the stress
/// suites; scripts/test runs the three groups as phases of their own.
/// Each suite says which group it is in with `.enabled(if:)`, and tagged
/// suites carry the tag (`.timed`, `.stress`) too.
public enum TestSelection {
  static let groups = Set((ProcessInfo.processInfo.environment["ODR_TESTS"] ?? "untagged,timed").split(separator: ",").map {
    $0.trimmingCharacters(in: .whitespaces)
  })

  /// Whether the untagged suites run.
  public static let untagged = groups.contains("untagged")
  /// Whether the `.timed` suites run.
  public static let timed = groups.contains("timed")
  /// Whether the `.stress` suites run.
  public static let stress = groups.contains("stress")
}
