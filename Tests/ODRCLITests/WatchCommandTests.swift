import Foundation
import ODRCLITesting
import ODRTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `odr exec --watch`: the built binary as a server's supervisor. The
/// command tells the test each start through a FIFO (no sleeps); odr runs
/// in the background of a shell that reports how it ended.
/// Timed: they run in the timed phase, beside few other suites, so that no
/// test of the crowded untagged phase delays a revalidation or a restart.
@Suite(.tags(.timed), .enabled(if: TestSelection.timed), .timeLimit(.minutes(2))) struct WatchCommandTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-watch-\(UUID().uuidString)")
  let bundle = "com.odr.watch.\(UUID().uuidString.prefix(8).lowercased())"
  var published: URL { root.appending(path: "pub") }
  var fifo: URL { root.appending(path: "started") }
  var errors: URL { root.appending(path: "stderr") }
  var pidFile: URL { root.appending(path: "odr.pid") }

  func environment(catalog: String) -> [String: String] {
    var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ODR_") }
    env["XDG_CACHE_HOME"] = root.appending(path: "cache").path
    env["XDG_STATE_HOME"] = root.appending(path: "state").path
    env["ODR_CATALOG"] = catalog
    env["ODR"] = Paths.odr.path
    env["FIFO"] = fifo.path
    env["ERR"] = errors.path
    env["PIDFILE"] = pidFile.path
    return env
  }

  /// Publishes Weather = `value` as catalog version `version`.
  func publish(_ value: String, version: Int) async throws {
    let source = root.appending(path: "src")
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    try Data(#"{"bundle": "\#(bundle)", "tags": {"APIKeys": {"category": "prefetch", "secrets": true, "files": ["APIKeys.json"]}}}"#.utf8)
      .write(to: source.appending(path: "tags.json"))
    try Data(#"{"keys": {"Weather": {"value": "\#(value)", "env": "WEATHER_KEY"}}}"#.utf8).write(to: source.appending(path: "APIKeys.json"))
    let pack = try await Command.odr(["pack", source.path, "--output", published.path, "--catalog-version", "\(version)", "--quiet", "--plaintext-secrets"],
                                     environment: environment(catalog: ""))
    try #require(pack.status == 0, "\(pack.stderr)")
  }

  /// Starts `odr exec --fetch APIKeys --watch 100ms` in the background of
  /// a shell, whose result (after odr ends) says how odr exited. The
  /// command writes "start VALUE PID" into the FIFO each time it starts.
  func startWatching(catalog: String, source: String = "--fetch APIKeys") throws -> Task<Command.Result, any Error> {
    guard mkfifo(fifo.path, 0o600) == 0 else { throw TestFailure("mkfifo: \(String(cString: strerror(errno)))") }
    // Descriptors this shell inherited (another test's pipes, opened
    // meanwhile) are closed first: the command lives long, and a pipe it
    // held open would keep that test waiting for its end.
    let script = """
      for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done 2>/dev/null
      "$ODR" exec \(source) --watch 100ms --stop-timeout 5 -- sh -c 'echo "start ${WEATHER_KEY:-$WEATHER} $$" > "$FIFO"; exec sleep 30' >/dev/null 2>"$ERR" &
      echo $! > "$PIDFILE"
      wait $!
      echo "odr exited $?"
      """
    let env = environment(catalog: catalog)
    return Task { try await Command.run("/bin/bash", ["-c", script], environment: env) }  // bash: descriptors above 9
  }

  /// The next start the command reports: its key and its pid. Bounded: a
  /// start that does not come within 60 s fails the test with what odr said.
  func nextStart() async throws -> (value: String, pid: pid_t) {
    let path = fifo.path
    let line = try await Command.offPool { () throws -> String in
      let giveUp = DispatchWorkItem {
        let fd = open(path, O_WRONLY | O_NONBLOCK)  // ends the reader's wait with nothing read
        if fd >= 0 { close(fd) }
      }
      DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: giveUp)
      defer { giveUp.cancel() }
      let fd = open(path, O_RDONLY)  // blocks until the command opens it to write
      guard fd >= 0 else { throw TestFailure("open the FIFO: \(String(cString: strerror(errno)))") }
      defer { close(fd) }
      var bytes: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 256)
      while case let n = read(fd, &buffer, buffer.count), n > 0 { bytes += buffer[..<n] }
      return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
    let parts = line.split(separator: " ")
    guard parts.count == 3, parts[0] == "start", let pid = pid_t(parts[2]) else {
      let said = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""  // nothing said yet
      throw TestFailure("no start of the command within 60 s (read '\(line)'); odr said: \(said)")
    }
    return (String(parts[1]), pid)
  }

  /// Waits (bounded) until odr's stderr holds `text`.
  func stderrShows(_ text: String) async throws -> Bool {
    for _ in 0..<1000 {
      if let written = try? String(contentsOf: errors, encoding: .utf8), written.contains(text) { return true }  // not written yet: wait
      try await Task.sleep(for: .milliseconds(5))
    }
    return false
  }

  /// Ends a watching odr a failed test left running (nothing when it ended).
  func stopOdr() {
    if let pid = try? odrPid() { kill(pid, SIGKILL) }  // no pid file: it never started
  }

  func odrPid() throws -> pid_t {
    guard let pid = pid_t(try String(contentsOf: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) else {
      throw TestFailure("no pid of odr")
    }
    return pid
  }

  @Test func aNewPackRestartsTheCommandAFailingSourceDoesNotAndSIGTERMEndsBoth() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await publish("w-1", version: 1)
    let run = try startWatching(catalog: "file://" + published.path)
    defer { stopOdr() }
    let first = try await nextStart()
    #expect(first.value == "w-1")
    // The source fails: said once, and the command keeps running.
    try FileManager.default.moveItem(at: published, to: root.appending(path: "pub.away"))
    #expect(try await stderrShows("could not revalidate the keys"))
    #expect(kill(first.pid, 0) == 0)
    try FileManager.default.moveItem(at: root.appending(path: "pub.away"), to: published)
    #expect(try await stderrShows("revalidated again"))
    // A new pack: the command is stopped and started with the new value.
    try await publish("w-2", version: 2)
    let second = try await nextStart()
    #expect(second.value == "w-2" && second.pid != first.pid)
    #expect(kill(first.pid, 0) == -1)
    #expect(try await stderrShows("the keys changed (Weather): restarting the command"))
    // SIGTERM to odr ends both, and odr exits as the command did.
    #expect(kill(try odrPid(), SIGTERM) == 0)
    let result = try await run.value
    #expect(result.stdout == "odr exited 143\n", "\(result.stdout)\(result.stderr)")
    #expect(kill(second.pid, 0) == -1)
    let said = try String(contentsOf: errors, encoding: .utf8)
    #expect(!said.contains("w-1") && !said.contains("w-2"), "\(said)")
    #expect(said.components(separatedBy: "could not revalidate").count == 2, "\(said)")  // once
  }

  /// A mirror that is down is said once, not at every interval, and once
  /// more when it is back.
  @Test func aMirrorOutageIsSaidOnceAndItsEnd() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await publish("w-1", version: 1)
    let mirror = root.appending(path: "mirror")
    let nginx = try await Nginx.start(root: published)
    defer { nginx.stop() }
    let run = try startWatching(catalog: "file://\(mirror.path)/,\(nginx.url.absoluteString)")
    defer { stopOdr() }
    #expect(try await nextStart().value == "w-1")
    #expect(try await stderrShows("mirror file://\(mirror.path)/ failed"))
    // Rounds at 100 ms, each read from the second mirror: four pass while the first is down.
    try #require(try await nginx.requests(atLeast: 5) { $0.path.hasSuffix("catalog.json") }.count >= 5)
    try FileManager.default.copyItem(at: published, to: mirror)
    #expect(try await stderrShows("no longer the case: mirror file://\(mirror.path)/ failed"))
    #expect(kill(try odrPid(), SIGTERM) == 0)
    _ = try await run.value
    let said = try String(contentsOf: errors, encoding: .utf8)
    #expect(said.components(separatedBy: "warning: mirror file://\(mirror.path)/ failed").count == 2, "\(said)")  // once
  }

  @Test func anUnchangedCatalogOnAWebServerIsRevalidatedWithoutARestart() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try await publish("w-1", version: 1)
    let nginx = try await Nginx.start(root: published)
    defer { nginx.stop() }
    let run = try startWatching(catalog: nginx.url.absoluteString)
    defer { stopOdr() }
    let first = try await nextStart()
    #expect(first.value == "w-1")
    let revalidations = try await nginx.requests(atLeast: 3) { $0.path.hasSuffix("catalog.json") && $0.status == 304 }
    #expect(revalidations.count >= 3)
    #expect(kill(first.pid, 0) == 0)  // still the first command
    #expect(kill(try odrPid(), SIGTERM) == 0)
    let result = try await run.value
    #expect(result.stdout == "odr exited 143\n", "\(result.stdout)\(result.stderr)")
    // The pack was read once, at the start: a 304 reads nothing more.
    let blobs = try await nginx.settledRequests().filter { $0.path.hasPrefix("/blobs/") }
    #expect(blobs.count == 1, "\(blobs.map(\.path))")
  }

  /// Without --fetch, the keyring is what is watched: `odr set` elsewhere
  /// restarts the command with the new value.
  @Test func aKeyChangedInTheKeyringRestartsTheCommand() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    let env = environment(catalog: "")
    let set = try await Command.odr(["set", "Weather", "--service", bundle], input: "k-1", environment: env)
    try #require(set.status == 0, "\(set.stderr)")
    let run = try startWatching(catalog: "", source: "--service \(bundle)")
    defer { stopOdr() }
    #expect(try await nextStart().value == "k-1")
    #expect(try await Command.odr(["set", "Weather", "--service", bundle], input: "k-2", environment: env).status == 0)
    #expect(try await nextStart().value == "k-2")
    #expect(kill(try odrPid(), SIGTERM) == 0)
    #expect(try await run.value.stdout == "odr exited 143\n")
  }
}
