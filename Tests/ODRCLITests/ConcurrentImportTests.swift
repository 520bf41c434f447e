import Foundation
import ODRCLITesting
import ODRTesting
import Testing

/// 8 processes import two documents in turn, 8 rounds each, while readers
/// run `odr env` until they are done: no reader ever sees a mix, and the last
/// import wins. `ODR_STRESS_ROUNDS=N` runs longer.
@Suite(.tags(.stress), .enabled(if: TestSelection.stress), .timeLimit(.minutes(2))) struct ConcurrentImportTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-concurrent-\(UUID().uuidString)")
  let bundle = "com.odr.concurrent.\(UUID().uuidString.prefix(8).lowercased())"

  /// The environment of the scripts: the keyring session, folders of this
  /// test's own, and ODR, ROOT, BUNDLE.
  var environment: [String: String] {
    var env = KeyringSession.shared.environment
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    env["ODR"] = Paths.odr.path
    env["ROOT"] = root.path
    env["BUNDLE"] = bundle
    env["ROUNDS"] = ProcessInfo.processInfo.environment["ODR_STRESS_ROUNDS"] ?? "8"
    return env
  }

  /// Packs two documents of 20 keys (catalogs ROOT/A and ROOT/B) and
  /// imports A: readers need keys to read.
  func packBothAndFetchA() async throws {
    let env = environment
    for document in ["A", "B"] {
      let source = root.appending(path: "src-\(document)")
      try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
      try Data(#"{"bundle": "\#(bundle)", "tags": {"APIKeys": {"category": "prefetch", "secrets": true, "files": ["APIKeys.json"]}}}"#.utf8)
        .write(to: source.appending(path: "tags.json"))
      let keys = (1...20).map { #""K\#($0)": "\#(document.lowercased())-\#($0)-\#(UUID().uuidString.prefix(6))""# }.joined(separator: ", ")
      try Data("{\(keys)}".utf8).write(to: source.appending(path: "APIKeys.json"))
      let pack = try await Command.odr(["pack", source.path, "--output", root.appending(path: document).path, "--quiet", "--plaintext-secrets"], environment: env)
      try #require(pack.status == 0, "\(pack.stderr)")
    }
    let first = try await Command.odr(["fetch", "APIKeys", "--catalog", root.appending(path: "A").path, "--quiet"], environment: env)
    try #require(first.status == 0, "\(first.stderr)")
  }

  /// Runs the bash `script` with no other test's command beside it; it
  /// must exit 0 and leave errors.log empty.
  func runAlone(_ script: String) async throws {
    let run = try await Command.run("/bin/bash", ["-c", script], environment: environment, exclusive: true)
    #expect(run.status == 0)
    let errors = (try? String(contentsOf: root.appending(path: "errors.log"), encoding: .utf8)) ?? ""  // none written: no errors
    #expect(errors.isEmpty, "\(errors.prefix(2000))")
  }

  /// 8 readers loop `odr exec` (each reads every key under the shared
  /// import lock) while `odr fetch` imports another document: the import
  /// still completes within 2 s, readers or not.
  @Test func eightReadersLoopingExecDoNotStarveAnImport() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await packBothAndFetchA()
    let script = #"""
      reader() {
        while [ ! -e "$ROOT/done" ]; do
          "$ODR" exec --no-mask --service "$BUNDLE" -- true 2>>"$ROOT/errors.log" && echo >> "$ROOT/reads.$1.log"
        done
      }
      for i in 1 2 3 4 5 6 7 8; do reader $i & done
      # The import starts once the readers are reading.
      until [ "$(cat "$ROOT"/reads.*.log 2>/dev/null | wc -l)" -ge 16 ]; do sleep 0.01; done
      start=$(date +%s%N)
      "$ODR" fetch APIKeys --catalog "$ROOT/B" --quiet 2>>"$ROOT/errors.log"; status=$?
      echo "$status $(( ($(date +%s%N) - start) / 1000000 ))" > "$ROOT/fetch.result"
      touch "$ROOT/done"
      wait
      """#
    try await runAlone(script)
    let result = try String(contentsOf: root.appending(path: "fetch.result"), encoding: .utf8).split(separator: " ")
    let milliseconds = try #require(Int(result[1].trimmingCharacters(in: .whitespacesAndNewlines)))
    #expect(result[0] == "0" && milliseconds < 2_000, "odr fetch exited \(result[0]) after \(milliseconds) ms among 8 readers")
    let reads = try FileManager.default.contentsOfDirectory(atPath: root.path).filter { $0.hasPrefix("reads.") }.count
    #expect(reads == 8)
  }

  @Test func eightImportersAndReadersNeverMixTwoDocuments() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await packBothAndFetchA()
    let env = environment

    let script = #"""
      fetcher() {
        n=$1
        for _ in $(seq "$ROUNDS"); do
          d=A; [ $((n % 2)) -eq 1 ] && d=B; n=$((n + 1))
          if "$ODR" fetch APIKeys --catalog "$ROOT/$d" --quiet 2>>"$ROOT/errors.log"; then echo "$(date +%s%N) $d" >> "$ROOT/fetches.log"
          else echo "fetch exited $?" >> "$ROOT/errors.log"; fi
        done
      }
      reader() {
        while [ ! -e "$ROOT/done" ]; do
          out=$("$ODR" env --format json --service "$BUNDLE" 2>>"$ROOT/errors.log") && printf '%s\n' "$out" | tr -d '\n' >> "$ROOT/reads.$1.log" && echo >> "$ROOT/reads.$1.log"
        done
      }
      reader 1 & reader 2 &
      fetchers=()
      for i in 1 2 3 4 5 6 7 8; do fetcher $i & fetchers+=($!); done
      wait "${fetchers[@]}"
      touch "$ROOT/done"
      wait
      """#
    try await runAlone(script)

    // Every read holds one whole document.
    var reads = 0
    for reader in [1, 2] {
      let lines = ((try? String(contentsOf: root.appending(path: "reads.\(reader).log"), encoding: .utf8)) ?? "").split(separator: "\n")
      for line in lines where !line.isEmpty && line != "{}" {
        let values = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String]).values
        let documents = Set(values.map { $0.prefix(2) })
        #expect(documents.count == 1 && values.count == 20, "a mixed read: \(documents.sorted())")
        reads += 1
      }
    }
    #expect(reads > 10)

    // The last successful import wins (or one that ended within 20 ms of it:
    // the two recordings may race).
    let fetches = try String(contentsOf: root.appending(path: "fetches.log"), encoding: .utf8).split(separator: "\n")
      .compactMap { line -> (UInt64, String)? in
        let parts = line.split(separator: " ")
        return parts.count == 2 ? UInt64(parts[0]).map { ($0, String(parts[1])) } : nil
      }.sorted { $0.0 < $1.0 }
    #expect(fetches.count > 16)
    let last = try #require(fetches.last)
    let acceptable = Set(fetches.filter { $0.0 + 20_000_000 >= last.0 }.map(\.1))
    let final = try await Command.odr(["env", "--format", "json", "--service", bundle], environment: env)
    let values = try #require(try JSONSerialization.jsonObject(with: Data(final.stdout.utf8)) as? [String: String]).values
    let winner = Set(values.map { String($0.prefix(1)).uppercased() })
    #expect(winner.count == 1 && acceptable.isSuperset(of: winner), "final \(winner), last fetches \(acceptable)")
  }
}
