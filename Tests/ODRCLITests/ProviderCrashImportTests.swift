import Foundation
import ODRCLITesting
import ODRTesting
import Testing

/// The provider dies at every call of a 20-key `odr fetch` in turn — before
/// answering, and after applying each change unanswered — and comes back
/// from what it had stored. After each crash every reader sees one whole
/// document, old or new, never a mix, and no key is missing
/// (docs/design.md, "Keyring layout", all or nothing).
@Suite(.tags(.stress), .enabled(if: TestSelection.stress), .timeLimit(.minutes(4))) struct ProviderCrashImportTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-provider-crash-\(UUID().uuidString)")
  let bundle = "com.odr.provider-crash.\(UUID().uuidString.prefix(8).lowercased())"
  let names = (1...20).map { String(format: "K%02d", $0) }

  func publish(_ generation: String, version: Int, in root: URL, environment: [String: String]) async throws {
    let source = root.appending(path: "src")
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    try Data(#"{"bundle": "\#(bundle)", "tags": {"APIKeys": {"category": "prefetch", "secrets": true, "files": ["APIKeys.json"]}}}"#.utf8)
      .write(to: source.appending(path: "tags.json"))
    let document = "{" + names.map { "\"\($0)\": \"\(generation)-\($0)\"" }.joined(separator: ", ") + "}"
    try Data(document.utf8).write(to: source.appending(path: "APIKeys.json"))
    let pack = try await Command.odr(["pack", source.path, "--output", root.appending(path: "pub").path, "--catalog-version", "\(version)",
                                      "--quiet", "--plaintext-secrets"], environment: environment)
    try #require(pack.status == 0, "\(pack.stderr)")
  }

  /// What one provider's share of the crash positions showed.
  struct Share: Sendable {
    var positions = 0
    var outcomes: [String: Int] = [:]
    var failures: [String] = []
    var calls = 0
    var mutations = 0
  }

  /// The positions are shared out between two fake providers, each in a
  /// session of its own with its own cache and state, run at once: each
  /// crash is a chain of processes waiting on each other, one core's work.
  @Test func aCrashAtEveryCallOfAnImportMixesNothingAndLosesNothing() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let providers = 2
    let shares = try await withThrowingTaskGroup(of: Share.self) { group in
      for provider in 0..<providers {
        group.addTask { try await crashes(provider: provider, of: providers) }
      }
      return try await group.reduce(into: [Share]()) { $0.append($1) }
    }
    let calls = shares[0].calls, mutations = shares[0].mutations
    #expect(shares.allSatisfy { $0.calls == calls && $0.mutations == mutations }, "the providers counted different imports")
    let outcomes = shares.reduce(into: [String: Int]()) { all, share in all.merge(share.outcomes, uniquingKeysWith: +) }
    let failures = shares.flatMap(\.failures)
    print("provider crash positions: \(calls) calls + \(mutations) changes of a \(names.count)-key import; readers saw \(outcomes); \(failures.count) failures")
    #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    #expect(shares.map(\.positions).reduce(0, +) == calls + mutations)
    #expect(outcomes.values.reduce(0, +) == calls + mutations)
  }

  /// Crashes the provider at every `providers`-th position, starting at `provider`.
  func crashes(provider: Int, of providers: Int) async throws -> Share {
    let root = root.appending(path: "provider-\(provider)")
    let session = try await KeyringSession.start(provider: .fake)
    defer { session.end() }
    var env = session.environment
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    env["ODR_CATALOG"] = root.appending(path: "pub").path
    env["ODR_SERVICE"] = nil
    let environment = env

    try await publish("old", version: 1, in: root, environment: env)
    try #require(try await Command.odr(["fetch", "APIKeys", "--quiet"], environment: env).status == 0)
    let before = root.appending(path: "before.json")
    try FileManager.default.copyItem(at: session.fakeState, to: before)
    try await publish("new", version: 2, in: root, environment: env)

    /// What every reader sees: the generation of one whole document, or a
    /// description of what is wrong with it.
    func readers() async throws -> Result<String, TestFailure> {
      let all = try await Command.odr(["env", "--format", "json", "--service", bundle], environment: environment)
      guard all.status == 0, let values = try? JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as? [String: String] else {
        return .failure(TestFailure("odr env: \(all.stderr)"))
      }
      let missing = names.filter { values[$0] == nil }
      guard missing.isEmpty else { return .failure(TestFailure("lost \(missing)")) }
      let generations = Set(values.values.map { $0.prefix { $0 != "-" } })
      guard generations.count == 1, let generation = generations.first else { return .failure(TestFailure("mixed \(values)")) }
      let one = try await Command.odr(["get", "K07", "--service", bundle], environment: environment)
      guard one.stdout == values["K07"] else { return .failure(TestFailure("odr get K07 said \(one.output), odr env \(values["K07"] ?? "")")) }
      return .success(String(generation))
    }

    // A clean import, to count its calls and changes.
    try await session.configure(faults: #"{"restore": "\#(before.path)"}"#)
    try #require(try await Command.odr(["fetch", "APIKeys", "--quiet"], environment: env).status == 0)
    var share = Share()
    (share.calls, share.mutations) = try await session.stats()
    try #require(try await readers().get() == "new")
    try #require(share.mutations >= names.count)

    let positions = (1...share.calls).map { #"{"call": \#($0)}"# } + (1...share.mutations).map { #"{"mutation": \#($0), "when": "after"}"# }
    for crash in positions.enumerated().filter({ $0.offset % providers == provider }).map(\.element) {
      share.positions += 1
      try await session.configure(faults: #"{"restore": "\#(before.path)", "crash": \#(crash)}"#)
      let fetch = try await Command.odr(["fetch", "APIKeys", "--quiet"], environment: env)
      try await session.revive()
      if fetch.status == 0 || fetch.status != 5 || fetch.stderr.split(separator: "\n").count != 1 || fetch.stderr.contains("locked") {
        share.failures.append("\(crash): fetch exited \(fetch.status): \(fetch.stderr)")
      }
      switch try await readers() {
      case .success(let generation): share.outcomes[generation, default: 0] += 1
      case .failure(let failure): share.failures.append("\(crash): \(failure)")
      }
    }

    // The next import completes what the crash cut short.
    try #require(try await Command.odr(["fetch", "APIKeys", "--quiet"], environment: env).status == 0)
    #expect(try await readers().get() == "new")
    return share
  }
}
