import Foundation

/// Which groups of tests run, chosen by `ODR_TESTS` (comma-separated):
/// `untagged` (every suite without a tag below), `timed` (suites that time
/// themselves in-process: they run apart, with no other test loading the
/// cores), `stress` (suites that are a load of their own, tens of seconds),
/// `root` (tests that act as another user, which needs root; they fail,
/// rather than skip, when run without it).
/// Unset: `untagged,timed`, so a plain `swift test` runs all but the stress
/// and root tests; scripts/test runs the first three groups as phases of
/// their own as an ordinary user, then the root group as root.
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
  /// Whether the tests that act as another user (as root) run.
  public static let root = groups.contains("root")
}
