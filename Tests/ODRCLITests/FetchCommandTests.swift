import Foundation
import ODRCLITesting
import ODRTesting
import Testing

/// `odr fetch` end to end: the built binary, a `file://` catalog and the
/// real keyring; every test uses its own bundle id and cache home.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct FetchCommandTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-fetch-\(UUID().uuidString)")
  let bundle = "com.odr.fetch.\(UUID().uuidString.prefix(8).lowercased())"
  let weather = "w-\(UUID().uuidString)"
  let maps = "m-\(UUID().uuidString)"
  var source: URL { root.appending(path: "src") }
  var published: URL { root.appending(path: "pub") }
  /// odr's TMPDIR: private, so the leak check reads only what odr wrote.
  var temporary: URL { root.appending(path: "tmp") }
  var environment: [String: String] {
    var env = KeyringSession.shared.environment
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    env["TMPDIR"] = temporary.path
    env["ODR_CATALOG"] = "file://" + published.path
    env["ODR_SERVICE"] = nil
    return env
  }

  func odr(_ arguments: [String]) async throws -> Command.Result {
    try await Command.odr(arguments, environment: environment)
  }

  /// Publishes an APIKeys document (as a new catalog version).
  func publish(_ document: String, version: Int) async throws {
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
    try Data("""
      { "bundle": "\(bundle)", "tags": {
        "APIKeys": { "category": "prefetch", "secrets": true, "files": ["APIKeys.json"] } } }
      """.utf8).write(to: source.appending(path: "tags.json"))
    try Data(document.utf8).write(to: source.appending(path: "APIKeys.json"))
    let pack = try await odr(["pack", source.path, "--output", published.path, "--catalog-version", "\(version)", "--quiet", "--plaintext-secrets"])
    try #require(pack.status == 0, "\(pack.stderr)")
  }

  func lookup(_ key: String) async throws -> String? {
    try await Command.keyringValue(service: bundle, key: key, environment: environment)
  }

  var document: String { #"{"keys": {"Weather": {"value": "\#(weather)", "env": "WEATHER_KEY"}, "Maps": {"value": "\#(maps)"}}}"# }

  @Test func fetchImportsReFetchKeepsAndChangesOnlyWhatChanged() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await publish(document, version: 1)
    // An item of the service in the layout before odr added username and account.
    _ = try await Command.secretTool(["store", "--label=legacy", "service", bundle, "key", "Legacy"], input: "l", environment: environment)
    let first = try await odr(["fetch", "APIKeys"])
    #expect(first.status == 0, "\(first.stderr)")
    #expect(first.stdout == "added     Maps\nadded     Weather\n")
    let legacy = try await Command.secretTool(["search", "--all", "service", bundle, "key", "Legacy"], environment: environment)
    #expect(legacy.stderr.contains("attribute.username = Legacy") && legacy.stderr.contains("attribute.account = Legacy"), "\(legacy.stderr)")
    #expect(try await lookup("Weather") == weather)
    #expect(try await odr(["fetch", "APIKeys"]).stdout == "unchanged Maps\nunchanged Weather\n")
    // odr doctor is the overview: the bundle trusted, the catalog as fetched, every service's keys.
    let other = bundle + ".other"
    #expect(try await Command.odr(["set", "Other", "--service", other], input: "o", environment: environment).status == 0)
    defer { Command.odrInBackground(["delete", "Other", "--service", other], environment: environment) }
    let doctor = try await odr(["doctor", "--json"])
    #expect(doctor.status == 0, "\(doctor.stderr)")
    let overview = (try JSONSerialization.jsonObject(with: Data(doctor.stdout.utf8)) as? [String: Any])?["overview"] as? [String: Any]
    #expect(((overview?["bundles"] as? [[String: Any]])?.map { $0["bundle"] as? String }).map { $0.contains(bundle) } == true, "\(doctor.stdout)")
    #expect((overview?["catalog"] as? [String: Any])?["bundle"] as? String == bundle && (overview?["catalog"] as? [String: Any])?["version"] as? Int == 1)
    let services = (overview?["services"] as? [[String: Any]] ?? []).reduce(into: [String: Int]()) { $0[$1["service"] as? String ?? ""] = $1["keys"] as? Int }
    #expect(services[bundle] == 3 && services[other] == 1, "\(services)")  // Maps, Weather and the legacy item; Other
    #expect(services.keys.allSatisfy { !$0.hasPrefix("odr.") && !$0.isEmpty }, "\(services)")
    let text = try await odr(["doctor"])
    #expect(text.stdout.contains("catalog: file://") && text.stdout.contains(": \(bundle) version 1, no expiry") && text.stdout.contains("keys: \(bundle) holds 3 keys")
            && text.stdout.contains("keys: \(other) holds 1 key\n"), "\(text.stdout)")
    try await publish(document.replacingOccurrences(of: maps, with: maps + "-2"), version: 2)
    #expect(try await odr(["fetch", "APIKeys"]).stdout == "changed   Maps\nunchanged Weather\n")
    #expect(try await lookup("Maps") == maps + "-2")
  }

  @Test func pruneDeletesKeysNoLongerPublished() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await publish(document, version: 1)
    #expect(try await odr(["fetch", "APIKeys"]).status == 0)
    try await publish(#"{"Weather": "\#(weather)"}"#, version: 2)
    #expect(try await odr(["fetch", "APIKeys"]).stdout == "changed   Weather\n")  // its metadata went away
    #expect(try await lookup("Maps") == maps)
    #expect(try await odr(["fetch", "APIKeys", "--prune"]).stdout == "pruned    Maps\nunchanged Weather\n")
    #expect(try await lookup("Maps") == nil)
  }

  @Test func anInvalidDocumentChangesNothing() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await publish(document, version: 1)
    #expect(try await odr(["fetch", "APIKeys"]).status == 0)
    let catalog = try Data(contentsOf: published.appending(path: "catalog.json"))
    // odr pack refuses it before writing, so no client ever sees it.
    try Data(#"{"Weather": "\#(weather)-new", "Maps": 42}"#.utf8).write(to: source.appending(path: "APIKeys.json"))
    let result = try await odr(["pack", source.path, "--output", published.path, "--catalog-version", "2", "--plaintext-secrets"])
    #expect(result.status == 1)
    #expect(result.stderr.contains("Key 'Maps': the value must be a string"))
    #expect(try Data(contentsOf: published.appending(path: "catalog.json")) == catalog)
    #expect(try await odr(["fetch", "APIKeys"]).stdout == "unchanged Maps\nunchanged Weather\n")
    #expect(try await lookup("Weather") == weather)
  }

  @Test func noSecretIsLeftOnDiskOrPrinted() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await publish(document, version: 1)
    try FileManager.default.removeItem(at: source)  // the publisher's copy is not the client's business
    let outputs = [try await odr(["fetch", "APIKeys"]), try await odr(["fetch", "APIKeys", "--json"]), try await odr(["status"]),
                   try await odr(["list", "--service", bundle])]
    for result in outputs {
      #expect(!result.output.contains(weather) && !result.output.contains(maps))
    }
    // The client's store, its state and odr's temporary directory hold no plaintext.
    var scanned = 0
    for folder in [root.appending(path: "cache"), root.appending(path: "state"), temporary] {
      let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
      while let url = enumerator?.nextObject() as? URL {
        guard let data = try? Data(contentsOf: url, options: .mappedIfSafe) else { continue }
        scanned += 1
        #expect(data.range(of: Data(weather.utf8)) == nil, "\(url.path)")
        #expect(data.range(of: Data(maps.utf8)) == nil, "\(url.path)")
      }
    }
    #expect(scanned > 0, "the scan read no file: is the cache where the test thinks?")
  }
}
