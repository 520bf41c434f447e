// Keyring benchmarks (issue 2). Run through scripts/bench, which builds in
// release mode and starts a private keyring. Each figure is the median of
// `runs` measurements, peers measured alternately in the same run.
import CBareLookup
import Foundation
import FoundationNetworking
import ODRAge
import ODRCatalog
import ODRCLITesting
import ODRKeyring
import ODRKeys
import ODRKeyFormat
import ODRNetworking
import ODRTesting
import ODRSigning
import ODRTrust

let runs = Int(ProcessInfo.processInfo.environment["ODR_BENCH_RUNS"] ?? "") ?? 21
let odrPath = CommandLine.arguments.dropFirst().first ?? ".build/release/odr"
let service = "com.odr.bench"
let clock = ContinuousClock()
/// ODR_BENCH_SECTIONS=a,m runs only those sections (default: all).
let sections = ProcessInfo.processInfo.environment["ODR_BENCH_SECTIONS"].map { Set($0.split(separator: ",").map(String.init)) }
func wants(_ section: String) -> Bool { sections?.contains(section) ?? true }

func report(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
func median(_ values: [Duration]) -> Duration { values.sorted()[values.count / 2] }
func spread(_ values: [Duration]) -> String { "[min \(ms(values.min()!)), max \(ms(values.max()!))]" }
func ms(_ d: Duration) -> String { String(format: "%.2f ms", Double(d.components.attoseconds) / 1e15 + Double(d.components.seconds) * 1e3) }
func ratio(_ a: Duration, _ b: Duration) -> String { String(format: "%.2f×", a / b) }

// (s) KMS recipients (issue 53): `odr exec --fetch APIKeys -- true` of a
// 500-key pack encrypted to a KMS key and an X25519 recipient, opened by KMS
// (a job with only a web identity: STS AssumeRoleWithWebIdentity, then KMS
// Decrypt, against moto_server behind the tests' shim) vs opened by the
// X25519 identity (ODR_IDENTITY), alternating, medians. The same calls made
// by boto3 in one Python process show what moto itself takes.
if wants("s") {
  let work = FileManager.default.temporaryDirectory.appending(path: "odr-bench-kms-\(UUID().uuidString)")
  defer { try? FileManager.default.removeItem(at: work) }
  let (source, env) = try apiKeysSource(in: work, bundle: "com.odr.bench.kms")
  let moto = try await MotoServer.start()
  let made = try await moto.boto("""
    import json
    kms = session.client("kms", endpoint_url=endpoint)
    iam = session.client("iam", endpoint_url=endpoint)
    key = kms.create_key()["KeyMetadata"]["Arn"]
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRoleWithWebIdentity", "Principal": {"Federated": "arn:aws:iam::123456789012:oidc-provider/ci"}}]}
    role = iam.create_role(RoleName="odr-bench-ci", AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]
    iam.put_role_policy(RoleName="odr-bench-ci", PolicyName="kms", PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "kms:Decrypt", "Resource": "*"}]}))
    print(json.dumps([key, role]))
    """)
  guard made.status == 0, let names = try JSONSerialization.jsonObject(with: Data(made.stdout.utf8)) as? [String], names.count == 2 else {
    fatalError("(s) the KMS set-up failed: \(made.output)")
  }
  let (key, role) = (names[0], names[1])
  let token = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJiZW5jaCJ9.\(UUID().uuidString)"
  let tokenFile = work.appending(path: "token.jwt")
  try Data(token.utf8).write(to: tokenFile)
  let identity = AgeIdentity()
  let shim = STSKMSShim(moto: moto, admitted: [role: token])
  try await shim.serving { server in
    var publisher = moto.environment(moto.user, base: env)
    publisher["AWS_ENDPOINT_URL"] = server.url
    let published = work.appending(path: "pub").path
    let pack = try await Command.run(odrPath, ["pack", source.path, "--output", published, "--quiet", "--recipient", "awskms:\(key)",
                                               "--recipient", identity.recipient.description], environment: publisher)
    guard pack.status == 0 else { fatalError("(s) odr pack failed: \(pack.stderr)") }
    var byKMS = moto.environment(nil, base: env)
    byKMS["AWS_ENDPOINT_URL"] = server.url
    byKMS["AWS_ROLE_ARN"] = role
    byKMS["AWS_WEB_IDENTITY_TOKEN_FILE"] = tokenFile.path
    var byAge = moto.environment(nil, base: env)
    byAge["ODR_IDENTITY"] = identity.secretKeyString
    var times: [Bool: [Duration]] = [false: [], true: []]
    for run in 0..<runs {
      for kms in run % 2 == 0 ? [true, false] : [false, true] {
        let start = clock.now
        let result = try await Command.run(odrPath, ["exec", "--catalog", published, "--fetch", "APIKeys", "--", "true"], environment: kms ? byKMS : byAge)
        times[kms]!.append(clock.now - start)
        guard result.status == 0 else { fatalError("(s) odr exec --fetch failed: \(result.stderr)") }
      }
    }
    // moto's and the shim's share: the same two calls from one warm
    // boto3 process, through the same shim.
    let calls = try await moto.boto("""
      import time, boto3
      kms = session.client("kms", endpoint_url=endpoint)
      blob = kms.encrypt(KeyId="\(key)", Plaintext=b"k" * 16, EncryptionContext={"odr:tag": "t"})["CiphertextBlob"]
      sts = boto3.client("sts", endpoint_url="\(server.url)", region_name="us-east-1")
      spent = []
      for _ in range(\(runs)):
          start = time.perf_counter()
          c = sts.assume_role_with_web_identity(RoleArn="\(role)", RoleSessionName="bench", WebIdentityToken="\(token)")["Credentials"]
          role = boto3.client("kms", endpoint_url="\(server.url)", region_name="us-east-1", aws_access_key_id=c["AccessKeyId"],
                              aws_secret_access_key=c["SecretAccessKey"], aws_session_token=c["SessionToken"])
          role.decrypt(CiphertextBlob=blob, EncryptionContext={"odr:tag": "t"})
          spent.append(time.perf_counter() - start)
      print(sorted(spent)[len(spent) // 2] * 1000)
      """)
    let callsMs = Double(calls.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? .nan
    let kms = median(times[true]!), age = median(times[false]!)
    let added = Double((kms - age).components.attoseconds) / 1e15 + Double((kms - age).components.seconds) * 1e3
    report(String(format: "(s) odr exec --fetch APIKeys -- true, 500 keys, opened by KMS (web identity: STS + KMS Decrypt, moto behind the shim) %@   by X25519 (ODR_IDENTITY) %@   added +%.2f ms (target ≤ +25 ms); the same STS + KMS calls from a warm boto3 through the same shim %.2f ms   [alternating, median of %d]",
                  ms(kms), ms(age), added, callsMs, runs))
  }
}

@discardableResult
func time(_ executable: String, _ arguments: [String], input: String? = nil, environment: [String: String]? = nil) throws -> Duration {
  let process = Process()
  process.executableURL = URL(filePath: executable)
  process.arguments = arguments
  if let environment { process.environment = environment }
  process.standardOutput = FileHandle.nullDevice
  let stdin = Pipe()
  process.standardInput = stdin
  let start = clock.now
  try process.run()
  if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
  try stdin.fileHandleForWriting.close()
  process.waitUntilExit()
  let elapsed = clock.now - start
  guard process.terminationStatus == 0 else { fatalError("\(executable) \(arguments) exited \(process.terminationStatus)") }
  return elapsed
}

/// A bare libsecret lookup on the calling thread: the floor odr is measured against.
/// A publisher's folder under `work` with a 500-key APIKeys secrets tag of
/// `bundle`, and the environment of a client whose cache and state are in
/// `work`.
func apiKeysSource(in work: URL, bundle: String) throws -> (source: URL, environment: [String: String]) {
  let source = work.appending(path: "src")
  try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
  try Data(#"{"bundle": "\#(bundle)", "tags": {"APIKeys": {"category": "prefetch", "secrets": true, "files": ["APIKeys.json"]}}}"#.utf8)
    .write(to: source.appending(path: "tags.json"))
  let keys = (1...500).map { "\"K\($0)\": \"value-\($0)-\(UUID().uuidString)\"" }.joined(separator: ", ")
  try Data("{\(keys)}".utf8).write(to: source.appending(path: "APIKeys.json"))
  var env = ProcessInfo.processInfo.environment
  env["XDG_CACHE_HOME"] = work.appending(path: "cache").path
  env["XDG_STATE_HOME"] = work.appending(path: "state").path
  return (source, env)
}

func bareLookup(_ name: String, in service: String = service) -> Bool {
  odr_bench_bare_lookup(service, name) == 1
}

let store = try SecretServiceStore(service: service)
try await store.deleteAll()
try await store.setValue("k-bench-value", for: "Weather")

// Linked statically (its own linkerSettings), copied beside odr-bench by scripts/build.
let bareFloor = URL(filePath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
  .deletingLastPathComponent().appending(path: "static/odr-floor").path
let searchOnce = URL(filePath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
  .deletingLastPathComponent().appending(path: "static/odr-search-once").path

report("odr keyring benchmarks — median of \(runs) runs; odr: \(odrPath)")

// (a) A cold `odr get` process vs `secret-tool lookup` (at least 31
// alternating runs), and `odr --version`: the start-up floor. `--version`
// and `get` are answered before ArgumentParser; `odr url check` (no
// keyring, no network) shows what a command parsed by ArgumentParser costs.
if wants("a") {
  var odrGet: [Duration] = [], toolLookup: [Duration] = [], version: [Duration] = [], parsed: [Duration] = []
  try time(odrPath, ["get", "Weather", "--service", service])  // warm the page cache for both
  try time("/usr/bin/secret-tool", ["lookup", "service", service, "key", "Weather"])
  for _ in 0..<max(runs, 31) {
    version.append(try time(odrPath, ["--version"]))
    parsed.append(try time(odrPath, ["url", "check", "https://example.com/a"]))
  }
  report("(a) odr --version: \(ms(median(version))) \(spread(version))   (target ≤ 5 ms)   odr url check: \(ms(median(parsed)))   [median of \(version.count)]")
  for _ in 0..<max(runs, 31) {
    odrGet.append(try time(odrPath, ["get", "Weather", "--service", service]))
    toolLookup.append(try time("/usr/bin/secret-tool", ["lookup", "service", service, "key", "Weather"]))
  }
  report("(a) cold get:   odr get \(ms(median(odrGet))) \(spread(odrGet))   secret-tool lookup \(ms(median(toolLookup))) \(spread(toolLookup))   ratio \(ratio(median(odrGet), median(toolLookup)))   (target ≤ 1.00×)   [median of \(odrGet.count)]")
  // The floor: a static Swift program making the same two libsecret
  // calls (odr-search-once SERVICE KEY), and `odr exec -- true` of that one
  // key (the default, masked: a child and the pump), and with --no-mask
  // (execve), alternating with `odr get`.
  var floor: [Duration] = [], gets: [Duration] = [], execs: [Duration] = [], execves: [Duration] = []
  let execOne = ["exec", "--only", "Weather", "--service", service, "--", "true"]
  let execveOne = ["exec", "--no-mask", "--only", "Weather", "--service", service, "--", "true"]
  try time(searchOnce, [service, "Weather"])
  for _ in 0..<max(runs, 51) {
    floor.append(try time(searchOnce, [service, "Weather"]))
    gets.append(try time(odrPath, ["get", "Weather", "--service", service]))
    execs.append(try time(odrPath, execOne))
    execves.append(try time(odrPath, execveOne))
  }
  func overGet(_ times: [Duration]) -> String { String(format: "%.2f", (median(times) - median(gets)) / .milliseconds(1)) }
  report("(a) cold get vs the static floor (same two libsecret calls): odr get \(ms(median(gets)))   floor \(ms(median(floor)))   ratio \(ratio(median(gets), median(floor)))   (target ≤ 1.10×)   odr exec --only Weather -- true \(ms(median(execs))): get + \(overGet(execs)) ms (target ≤ +3 ms); with --no-mask \(ms(median(execves))): get + \(overGet(execves)) ms   [alternating, median of \(gets.count)]")
  // The bare floor (issue 51): a static Swift program with no Foundation
  // and no odr module making the two libsecret calls of one lookup
  // (Benchmarks/odr-floor), and that program's start alone (--version).
  var bare: [Duration] = [], coldGets: [Duration] = [], bareStarts: [Duration] = [], odrStarts: [Duration] = []
  try time(bareFloor, [service, "Weather"])
  for _ in 0..<max(runs, 51) {
    bare.append(try time(bareFloor, [service, "Weather"]))
    coldGets.append(try time(odrPath, ["get", "Weather", "--service", service]))
    bareStarts.append(try time(bareFloor, ["--version"]))
    odrStarts.append(try time(odrPath, ["--version"]))
  }
  report("(a) cold get vs the bare floor (no Foundation, no odr module): odr get \(ms(median(coldGets)))   floor \(ms(median(bare)))   ratio \(ratio(median(coldGets), median(bare)))   (target ≤ 1.15×, then 1.10×)   odr --version \(ms(median(odrStarts)))   floor --version \(ms(median(bareStarts)))   ratio \(ratio(median(odrStarts), median(bareStarts)))   (target ≤ 1.20×)   [alternating, median of \(bare.count)]")
  // Against an earlier build (ODR_BENCH_BASELINE=/path/to/odr), run
  // alternately so both see the same machine: start-up must not regress.
  if let baseline = ProcessInfo.processInfo.environment["ODR_BENCH_BASELINE"] {
    var now: [String: [Duration]] = [:], before: [String: [Duration]] = [:]
    for _ in 0..<max(runs, 51) {
      for (label, arguments) in [("get", ["get", "Weather", "--service", service]), ("--version", ["--version"])] {
        now[label, default: []].append(try time(odrPath, arguments))
        before[label, default: []].append(try time(baseline, arguments))
      }
    }
    for label in ["get", "--version"] {
      let delta = (median(now[label]!) - median(before[label]!)) / .milliseconds(1)
      report("(a) odr \(label) vs \(baseline): \(ms(median(now[label]!))) vs \(ms(median(before[label]!)))   Δ \(String(format: "%+.2f", delta)) ms (target ≤ +0.5 ms)   [alternating, median of \(now[label]!.count)]")
    }
  }
}

// (b) Storing 200 keys: the library vs a shell loop of `secret-tool store`.
if wants("b") {
  let keyCount = 200
  let loop = "for i in $(seq 1 \(keyCount)); do printf 'value-%s' \"$i\" | secret-tool store --label=bench service \(service).tool key K$i || exit 1; done"
  let toolStore = try SecretServiceStore(service: service + ".tool")
  var libraryStores: [Duration] = [], toolStores: [Duration] = []
  let storeRuns = Int(ProcessInfo.processInfo.environment["ODR_BENCH_STORE_RUNS"] ?? "") ?? runs
  for _ in 0..<storeRuns {
    let start = clock.now
    for i in 1...keyCount { try await store.setValue("value-\(i)", for: "K\(i)") }
    libraryStores.append(clock.now - start)
    try await store.deleteAll()
    toolStores.append(try time("/bin/bash", ["-c", loop]))
    try await toolStore.deleteAll()
  }
  if storeRuns > 0 { report("(b) store \(keyCount):  library \(ms(median(libraryStores)))   secret-tool loop \(ms(median(toolStores)))   speed-up \(ratio(median(toolStores), median(libraryStores)))   (target ≥ 2.00×)") }
}

// (c) In-process lookup: SecretServiceStore.value(for:) vs a bare libsecret call.
if wants("c") {
  try await store.setValue("k-bench-value", for: "Weather")
  let perRun = 100
  var odrLookups: [Duration] = [], bareLookups: [Duration] = []
  _ = bareLookup("Weather"); _ = try await store.value(for: "Weather")
  for _ in 0..<runs {
    // Alternate call by call so that noise on the machine hits both alike.
    var ours = Duration.zero, bare = Duration.zero
    for _ in 0..<perRun {
      var start = clock.now
      _ = try await store.value(for: "Weather")
      ours += clock.now - start
      start = clock.now
      precondition(bareLookup("Weather"))
      bare += clock.now - start
    }
    odrLookups.append(ours / perRun)
    bareLookups.append(bare / perRun)
  }
  report("(c) lookup:     SecretServiceStore \(ms(median(odrLookups)))   bare libsecret \(ms(median(bareLookups)))   ratio \(ratio(median(odrLookups), median(bareLookups)))   (target ≤ 1.20×)")
  try await store.deleteAll()
}

// (d) `odr fetch` of a 500-key document into an empty keyring vs a bash loop
// of 500 `secret-tool store`, and a re-fetch of the same document.
if wants("d") {
  let fetchRuns = Int(ProcessInfo.processInfo.environment["ODR_BENCH_FETCH_RUNS"] ?? "") ?? 5
  if fetchRuns > 0 {
    let work = FileManager.default.temporaryDirectory.appending(path: "odr-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: work) }
    let fetchService = "com.odr.bench.fetch"
    let (source, env) = try apiKeysSource(in: work, bundle: fetchService)
    try time(odrPath, ["pack", source.path, "--output", work.appending(path: "catalog").path, "--quiet", "--plaintext-secrets"], environment: env)
    let fetchArgs = ["fetch", "APIKeys", "--catalog", work.appending(path: "catalog").path, "--quiet"]
    let fetchStore = try SecretServiceStore(service: fetchService)
    let loop500 = "for i in $(seq 1 500); do printf 'value-%s' \"$i\" | secret-tool store --label=bench service \(fetchService).tool key K$i || exit 1; done"
    let loopStore = try SecretServiceStore(service: fetchService + ".tool")
    var first: [Duration] = [], again: [Duration] = [], loops: [Duration] = []
    for _ in 0..<fetchRuns {
      try await fetchStore.deleteAll()
      first.append(try time(odrPath, fetchArgs, environment: env))
      again.append(try time(odrPath, fetchArgs, environment: env))
      try await fetchStore.deleteAll()
      loops.append(try time("/bin/bash", ["-c", loop500]))
      try await loopStore.deleteAll()
    }
    report("(d) fetch 500:  odr fetch \(ms(median(first)))   secret-tool loop \(ms(median(loops)))   speed-up \(ratio(median(loops), median(first)))   (target ≥ 2.00×); re-fetch \(ms(median(again))) = \(ratio(median(again), median(first))) of the first import   (target ≤ 0.10×)   [median of \(fetchRuns)]")
  }
}

// (e) Download (issue 3): `odr begin` of a 256 MiB tag from a loopback server
// vs `curl -o FILE URL && sha256sum FILE` for the same bytes; odr's peak RSS.
if wants("e") {
  let downloadRuns = Int(ProcessInfo.processInfo.environment["ODR_BENCH_DOWNLOAD_RUNS"] ?? "") ?? 5
  if downloadRuns > 0 {
    let work = FileManager.default.temporaryDirectory.appending(path: "odr-bench-dl-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: work) }
    let source = work.appending(path: "src")
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    try Data(#"{"bundle": "com.odr.bench.dl", "tags": {"Movie": {"category": "onDemand", "files": ["movie.bin"]}}}"#.utf8)
      .write(to: source.appending(path: "tags.json"))
    var bytes = Data(count: 256 << 20)
    bytes.withUnsafeMutableBytes { buffer in
      var state: UInt64 = 0x9e3779b97f4a7c15
      for index in stride(from: 0, to: buffer.count, by: 8) {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        buffer.storeBytes(of: state, toByteOffset: index, as: UInt64.self)
      }
    }
    try bytes.write(to: source.appending(path: "movie.bin"))
    bytes = Data()
    var env = ProcessInfo.processInfo.environment
    env["XDG_CACHE_HOME"] = work.appending(path: "cache").path
    env["XDG_STATE_HOME"] = work.appending(path: "state").path
    try time(odrPath, ["pack", source.path, "--output", work.appending(path: "pub").path, "--quiet"], environment: env)
    try await TestHTTPServer.serving(files: work.appending(path: "pub")) { server in
      let sha = String(try await Command.run("/usr/bin/sha256sum", [source.appending(path: "movie.bin").path]).stdout.prefix(64))
      let begin = ["-f", "%M", odrPath, "begin", "Movie", "--catalog", server.baseURL.absoluteString, "--quiet"]
      let curl = "curl -s -o '\(work.path)/curl.bin' \(server.baseURL.absoluteString)blobs/\(sha) && sha256sum '\(work.path)/curl.bin' >/dev/null"
      var odrTimes: [Duration] = [], curlTimes: [Duration] = [], rss: [Int] = []
      for _ in 0..<downloadRuns {
        try? FileManager.default.removeItem(at: work.appending(path: "cache/odr/com.odr.bench.dl/blobs/\(sha)"))
        let start = clock.now
        let result = try await Command.run("/usr/bin/time", begin, environment: env)
        odrTimes.append(clock.now - start)
        guard result.status == 0 else { fatalError("odr begin failed: \(result.stderr)") }
        rss.append(Int(result.stderr.split(separator: "\n").last ?? "") ?? 0)
        curlTimes.append(try time("/bin/bash", ["-c", curl]))
        try? FileManager.default.removeItem(at: work.appending(path: "curl.bin"))
      }
      report("(e) download 256 MiB:  odr begin \(ms(median(odrTimes)))   curl + sha256sum \(ms(median(curlTimes)))   ratio \(ratio(median(odrTimes), median(curlTimes)))   (target ≤ 1.10×); odr peak RSS \(rss.max()! / 1024) MiB (target ≤ 64 MiB)   [median of \(downloadRuns)]")
    }
  }
}

// (f) CI injection (issue 7): `odr exec -- true` with 50 keys from the keyring
// vs `env K1=V1 … K50=V50 true`; the difference minus one keyring search —
// a cold process that only connects and searches (odr-search-once) — is what
// odr adds. The in-process search (connection already open) is shown too.
if wants("f") {
  let execRuns = Int(ProcessInfo.processInfo.environment["ODR_BENCH_EXEC_RUNS"] ?? "") ?? runs
  if execRuns > 0 {
    let execService = "com.odr.bench.exec"
    let execStore = try SecretServiceStore(service: execService)
    try await execStore.deleteAll()
    var pairs: [String] = []
    for i in 1...50 {
      let value = "value-\(i)-\(UUID().uuidString)"
      try await execStore.setValue(value, for: "K\(i)")
      pairs.append("K\(i)=\(value)")
    }
    // --no-mask: the execve path this target was set for (masking has its own benchmark, k).
    let execArgs = ["exec", "--no-mask", "--service", execService, "--", "true"]
    try time(odrPath, execArgs)
    try time("/usr/bin/env", pairs + ["true"])
    var execTimes: [Duration] = [], envTimes: [Duration] = [], coldSearches: [Duration] = [], searches: [Duration] = []
    for _ in 0..<execRuns {
      execTimes.append(try time(odrPath, execArgs))
      envTimes.append(try time("/usr/bin/env", pairs + ["true"]))
      coldSearches.append(try time(searchOnce, [execService]))
      let start = clock.now
      guard try await execStore.values(for: nil).count == 50 else { fatalError("search lost keys") }
      searches.append(clock.now - start)
    }
    let added = median(execTimes) - median(envTimes) - median(coldSearches)
    report("(f) exec 50 keys:  odr exec -- true \(ms(median(execTimes))) \(spread(execTimes))   env K=V… true \(ms(median(envTimes)))   one keyring search: cold process \(ms(median(coldSearches))), in-process \(ms(median(searches)))   added beyond env + the cold search \(ms(added))   (target ≤ 5.00 ms)   [median of \(execRuns)]")
    try await execStore.deleteAll()
  }
}

// (g) APIClient (issue 6): 2,000 sequential GETs on loopback through
// APIClient — key lookup and injection, policy checks of the URL, its own
// redirect handling — vs bare `URLSession.data(for:)` on a session configured
// like APIClient's, alternating in blocks of 100 (and which goes first) so
// machine noise hits both; totals and the median block are reported.
if wants("g") {
  let clientRequests = Int(ProcessInfo.processInfo.environment["ODR_BENCH_CLIENT_REQUESTS"] ?? "") ?? 2000
  if clientRequests > 0 {
    try await TestHTTPServer.answering({ _ in .text(#"{"ok": true}"#) }) { server in
      let key = APIKey(name: "Weather", value: "k-\(UUID().uuidString)", metadata: KeyMetadata(header: "X-Api-Key", hosts: ["127.0.0.1:\(server.port)"]))
      let client = try APIClient(baseURL: server.url, keys: { _ in key })
      // The same configuration APIClient uses, so only the client's own work differs.
      let configuration = URLSessionConfiguration.ephemeral
      configuration.httpCookieStorage = nil
      configuration.urlCache = nil
      let session = URLSession(configuration: configuration)
      // What a caller writes without APIClient, per request: a URL from a
      // string, a request, the key header.
      let bareString = server.url + "/v1/forecast?city=Oslo"
      func bareRequest() -> URLRequest {
        var request = URLRequest(url: URL(string: bareString)!)
        request.setValue(key.value, forHTTPHeaderField: "X-Api-Key")
        return request
      }
      let apiRequest = APIRequest<Data>.data(path: "/v1/forecast", query: ["city": "Oslo"], key: "Weather")
      _ = try await client.send(apiRequest)  // warm both connections
      _ = try await session.data(for: bareRequest())
      /// CPU time of this process so far (all threads: client, URLSession, server).
      func cpuTime() -> Duration {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return .microseconds(Int64(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1_000_000 + Int64(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec))
      }
      var clientBlocks: [Duration] = [], bareBlocks: [Duration] = []
      var clientCPU = Duration.zero, bareCPU = Duration.zero
      for round in 0..<(clientRequests / 100) {
        // Which goes first alternates too: the second of a pair runs warmer.
        for clientFirst in round.isMultiple(of: 2) ? [true, false] : [false, true] {
          let start = clock.now, cpuStart = cpuTime()
          if clientFirst {
            for _ in 0..<100 { _ = try await client.send(apiRequest) }
            clientBlocks.append(clock.now - start)
            clientCPU += cpuTime() - cpuStart
          } else {
            for _ in 0..<100 { _ = try await session.data(for: bareRequest()) }
            bareBlocks.append(clock.now - start)
            bareCPU += cpuTime() - cpuStart
          }
        }
      }
      guard server.requests.allSatisfy({ $0.headers["x-api-key"] == key.value }) else { fatalError("a request went without its key") }
      let clientTotal = clientBlocks.reduce(.zero, +), bareTotal = bareBlocks.reduce(.zero, +)
      report("(g) APIClient \(clientRequests) GETs:  APIClient \(ms(clientTotal))   bare URLSession \(ms(bareTotal))   ratio \(ratio(clientTotal, bareTotal)); per block of 100, median: \(ms(median(clientBlocks))) vs \(ms(median(bareBlocks))) = \(ratio(median(clientBlocks), median(bareBlocks))); CPU time (client + URLSession + in-process server) \(ms(clientCPU)) vs \(ms(bareCPU)) = \(ratio(clientCPU, bareCPU))   (target ≤ 1.05×)")
    }
  }
}

// (h) Prefetch (issue 4): `odr prefetch` of 20 tags × 8 MiB from the loopback
// server vs a sequential `curl -o` loop of the same blobs.
if wants("h") {
  let prefetchRuns = Int(ProcessInfo.processInfo.environment["ODR_BENCH_PREFETCH_RUNS"] ?? "") ?? 5
  if prefetchRuns > 0 {
    let work = FileManager.default.temporaryDirectory.appending(path: "odr-bench-pf-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: work) }
    let source = work.appending(path: "src")
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    var entries: [String] = []
    for index in 0..<20 {
      var bytes = Data(count: 8 << 20)
      bytes.withUnsafeMutableBytes { buffer in
        var state = UInt64(index + 1) &* 0x9e3779b97f4a7c15
        for offset in stride(from: 0, to: buffer.count, by: 8) {
          state = state &* 6364136223846793005 &+ 1442695040888963407
          buffer.storeBytes(of: state, toByteOffset: offset, as: UInt64.self)
        }
      }
      try bytes.write(to: source.appending(path: "t\(index).bin"))
      entries.append(#""T\#(index)": {"category": "prefetch", "order": \#(index), "files": ["t\#(index).bin"]}"#)
    }
    try Data(#"{"bundle": "com.odr.bench.pf", "tags": {\#(entries.joined(separator: ", "))}}"#.utf8).write(to: source.appending(path: "tags.json"))
    var env = ProcessInfo.processInfo.environment
    env["XDG_CACHE_HOME"] = work.appending(path: "cache").path
    env["XDG_STATE_HOME"] = work.appending(path: "state").path
    try time(odrPath, ["pack", source.path, "--output", work.appending(path: "pub").path, "--quiet"], environment: env)
    try await TestHTTPServer.serving(files: work.appending(path: "pub")) { server in
      let blobs = try FileManager.default.contentsOfDirectory(atPath: work.appending(path: "pub/blobs").path).sorted()
      let curlLoop = "for b in \(blobs.joined(separator: " ")); do curl -s -f -o '\(work.path)/curl/'$b \(server.baseURL.absoluteString)blobs/$b || exit 1; done"
      // Twice: a server that answers at once, and one 50 ms away (the first
      // byte of each blob comes 50 ms after the request, as from a CDN).
      for latency in [Duration.zero, .milliseconds(50)] {
        for blob in blobs { server.setFault(latency == .zero ? nil : .latency(latency), forPathEndingWith: blob) }
        var odrTimes: [Duration] = [], curlTimes: [Duration] = []
        for _ in 0..<prefetchRuns {
          try? FileManager.default.removeItem(at: work.appending(path: "cache"))
          odrTimes.append(try time(odrPath, ["prefetch", "--catalog", server.baseURL.absoluteString, "--quiet"], environment: env))
          try? FileManager.default.removeItem(at: work.appending(path: "curl"))
          try FileManager.default.createDirectory(at: work.appending(path: "curl"), withIntermediateDirectories: true)
          curlTimes.append(try time("/bin/bash", ["-c", curlLoop]))
        }
        report("(h) prefetch 20 × 8 MiB, server latency \(ms(latency)):  odr prefetch \(ms(median(odrTimes)))   sequential curl loop \(ms(median(curlTimes)))   speed-up \(ratio(median(curlTimes), median(odrTimes)))   (target ≥ 3.00×)   [median of \(prefetchRuns)]")
      }
    }
  }
}

// (i) Trusted delivery (issue 11): `odr fetch` of a signed catalog whose
// 500-key pack is encrypted to an identity in the keyring vs the same keys
// plain and unsigned, alternating, each into an emptied keyring.
if wants("i") {
  let trustRuns = Int(ProcessInfo.processInfo.environment["ODR_BENCH_TRUST_RUNS"] ?? "") ?? 9
  if trustRuns > 0 {
    let work = FileManager.default.temporaryDirectory.appending(path: "odr-bench-trust-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: work) }
    let trustService = "com.odr.bench.trust"
    let (source, env) = try apiKeysSource(in: work, bundle: trustService)
    let identityName = "bench-\(UUID().uuidString.prefix(8))"
    let identity = AgeIdentity()
    try await SecretServiceStore(service: "odr.identity").setValue(identity.secretKeyString, for: identityName)
    let signing = SigningKey()
    var signEnv = env
    signEnv["ODR_SIGNING_KEY"] = signing.secretKeyString
    try time(odrPath, ["pack", source.path, "--output", work.appending(path: "trusted").path, "--quiet", "--recipient", identity.recipient.description], environment: signEnv)
    try time(odrPath, ["pack", source.path, "--output", work.appending(path: "plain").path, "--quiet", "--plaintext-secrets"], environment: env)
    let trustedArgs = ["fetch", "APIKeys", "--catalog", work.appending(path: "trusted").path, "--quiet", "--trust", signing.verifyingKey.description]
    let plainArgs = ["fetch", "APIKeys", "--catalog", work.appending(path: "plain").path, "--quiet"]
    let trustStore = try SecretServiceStore(service: trustService)
    var trusted: [Duration] = [], plain: [Duration] = []
    var plainEnv = env
    plainEnv["XDG_STATE_HOME"] = work.appending(path: "state-plain").path  // its own trust state: plain and signed are different publishers
    for run in 0..<trustRuns {
      for which in run % 2 == 0 ? [true, false] : [false, true] {
        try await trustStore.deleteAll()
        if which { trusted.append(try time(odrPath, trustedArgs, environment: env)) } else { plain.append(try time(odrPath, plainArgs, environment: plainEnv)) }
      }
    }
    try await trustStore.deleteAll()
    _ = try await SecretServiceStore(service: "odr.identity").deleteValue(for: identityName)
    report("(i) fetch 500, signed + encrypted vs plain + unsigned:  \(ms(median(trusted)))   vs \(ms(median(plain)))   ratio \(ratio(median(trusted), median(plain)))   (target ≤ 1.05×)   [median of \(trustRuns)]")

  }
}

// (j) Verifying a signed 10,000-file catalog in-process (issue 23): the
// signature over the raw bytes, decoding, and a 10-link hand-over chain —
// with Ed25519 keys (format 2), then with hybrid Ed25519 + ML-DSA-65 keys
// (format 3, issue 52), in the same run.
if wants("j") {
  var files: [Catalog.File] = []
  for index in 0..<10_000 {
    files.append(Catalog.File(path: "assets/\(index / 100)/file-\(index).bin", size: Int64(index), sha256: String(repeating: String(index % 10), count: 64)))
  }
  let tagged = Dictionary(uniqueKeysWithValues: (0..<100).map { ("Tag\($0)", Catalog.Tag(category: .onDemand, files: Array(files[($0 * 100)..<($0 * 100 + 100)]))) })
  var decodes: [Duration] = []
  var figures: [Bool: Duration] = [:]
  for postQuantum in [false, true] {
    // A 10-link hand-over chain from `root` (what a stateless client pins)
    // to the last key, which signs the catalog.
    let chainKeys = try (0...10).map { _ in try SigningKey(postQuantum: postQuantum) }
    let root = chainKeys[0], signing = chainKeys[10]
    var chain: [Handover] = []
    for index in 0..<10 {
      chain.append(try Handover(bundle: "com.odr.bench.big", version: index + 1, signers: [chainKeys[index + 1].verifyingKey], signedWith: chainKeys[index]))
    }
    var big = Catalog(bundle: "com.odr.bench.big", version: 10, expires: Date().addingTimeInterval(86_400), signers: [signing.verifyingKey], handovers: chain, tags: tagged)
    big.formatVersion = CatalogSignature.format(signedBy: [signing])
    let bytes = big.encoded()
    let signatureFile = try CatalogSignature(signing: bytes, with: signing).encoded
    if !postQuantum {
      for _ in 0..<21 {
        let start = clock.now
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        _ = try decoder.decode(Catalog.self, from: bytes)
        decodes.append(clock.now - start)
      }
      report("(j') JSONDecoder alone on it: \(ms(median(decodes)))")
    }
    // As a client does it (trust before decode): the signature over the raw
    // bytes first, then the header (bounded, the tags skipped), then the one
    // trust decision (the chain followed from the pinned root to the signer),
    // and only then the tags decoded.
    var verifies: [Duration] = [], signatures: [Duration] = [], chains: [Duration] = [], headers: [Duration] = [], tags: [Duration] = []
    for _ in 0..<21 {
      let start = clock.now
      let signature = try CatalogSignature(parsing: signatureFile)
      let lines = signature.verifiedLines(of: bytes)  // each line checked once, as the client does
      let signed = clock.now
      let header = try CatalogHeader.read(bytes)
      let valid = lines.filter { $0.format == CatalogSignature.form(ofFormat: header.formatVersion) }.map(\.key)
      guard !valid.isEmpty else { fatalError("signature") }
      let read = clock.now
      _ = try TrustDecision(header: header, signedBy: valid, pinned: [root.verifyingKey], location: "https://bench.example/catalog.json",
                            now: Date(), state: nil).decide()
      let decided = clock.now
      _ = try Catalog.decode(bytes)
      let end = clock.now
      verifies.append(end - start)
      signatures.append(signed - start)
      chains.append(decided - read)
      headers.append(read - signed)
      tags.append(end - decided)
    }
    figures[postQuantum] = median(verifies)
    let kind = postQuantum ? "hybrid Ed25519 + ML-DSA-65 (format 3)" : "Ed25519"
    let target = postQuantum ? "(target ≤ the Ed25519 figure + 5 ms: \(ms(median(verifies) - (figures[false] ?? .zero))) more)" : "(targets ≤ 20 ms; chain ≤ 1 ms)"
    report("(j) verify a signed 10,000-file catalog (\(bytes.count / 1024) KiB) with a 10-link hand-over chain in-process, \(kind): \(ms(median(verifies))) \(spread(verifies)), of which the signature \(ms(median(signatures))), the header \(ms(median(headers))), the decision with the chain \(ms(median(chains))), the tags \(ms(median(tags)))   \(target)   [median of 21]")
  }
}

// (k) Masking (issue 12): `odr exec --mask -- cat LOG` over 100 MiB of log
// lines with 1, 20 and 200 keys in the keyring, vs `cat LOG`; both write to
// /dev/null. Keys appear in the log now and then, raw and base64-encoded.
if wants("k") {
  let maskRuns = Int(ProcessInfo.processInfo.environment["ODR_BENCH_MASK_RUNS"] ?? "") ?? 5
  if maskRuns > 0 {
    let work = FileManager.default.temporaryDirectory.appending(path: "odr-bench-mask-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: work) }
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    let log = work.appending(path: "app.log")
    let keys = (0..<200).map { "sk-live-\($0)-\(UUID().uuidString.lowercased())" }
    _ = FileManager.default.createFile(atPath: log.path, contents: nil)
    let handle = try FileHandle(forWritingTo: log)
    var line = 0
    var written = 0
    while written < 100 << 20 {
      var block = ""
      for _ in 0..<1000 {
        line += 1
        let key = keys[line % 997 % keys.count]
        block += "2026-11-22T10:\(line % 60):\(line % 60).\(line % 1000)Z INFO  [worker-\(line % 8)] GET /v1/forecast?city=oslo&units=metric status=200 bytes=\(line % 5000) duration=\(line % 300)ms"
        block += line % 500 == 0 ? " auth=\(key)\n" : line % 777 == 0 ? " basic=\(Data(("user:" + key).utf8).base64EncodedString())\n" : " user_agent=\"curl/8.5.0\" request_id=\(UUID().uuidString)\n"
      }
      handle.write(Data(block.utf8))
      written += block.utf8.count
    }
    try handle.close()
    let mib = Double(written) / Double(1 << 20)
    func rate(_ d: Duration) -> String { String(format: "%.0f MB/s", Double(written) / 1e6 / (Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18)) }
    var cats: [Duration] = [], piped: [Duration] = []
    for _ in 0..<maskRuns {
      cats.append(try time("/bin/cat", [log.path]))
      piped.append(try time("/bin/sh", ["-c", "cat '\(log.path)' | cat"]))  // the floor for anything between a command and its output
    }
    var results: [(count: Int, time: Duration)] = []
    for count in [1, 20, 200] {
      let maskService = "com.odr.bench.mask\(count)"
      let maskStore = try SecretServiceStore(service: maskService)
      try await maskStore.deleteAll()
      for key in keys.prefix(count) { try await maskStore.setValue(key, for: "K\(keys.firstIndex(of: key)!)") }
      var times: [Duration] = []
      for _ in 0..<maskRuns { times.append(try time(odrPath, ["exec", "--mask", "--service", maskService, "--", "/bin/cat", log.path])) }
      try await maskStore.deleteAll()
      results.append((count, median(times)))
    }
    let one = results[0].time
    report(String(format: "(k) mask %.0f MiB of log: cat %@ (%@), cat | cat %@ (%@)", mib, ms(median(cats)), rate(median(cats)), ms(median(piped)), rate(median(piped)))
           + results.map { "   \($0.count) key\($0.count == 1 ? "" : "s") \(ms($0.time)) (\(rate($0.time)))" }.joined()
           + "   1 key / cat \(ratio(one, median(cats))), / cat | cat \(ratio(one, median(piped))) (target ≤ 3.00×)   200 keys / 1 key \(ratio(results[2].time, one)) (target ≤ 1.30×)   [median of \(maskRuns)]")
  }
}

// (l) Secret references (issue 16): `odr exec --env-file` of a file with 50
// odr:// references vs `odr exec` of the same 50 keys, and vs a shell loop of
// 50 `secret-tool lookup` calls (what resolving one by one costs).
if wants("l") {
  let referenceRuns = Int(ProcessInfo.processInfo.environment["ODR_BENCH_REFERENCE_RUNS"] ?? "") ?? 21
  if referenceRuns > 0 {
    let work = FileManager.default.temporaryDirectory.appending(path: "odr-bench-refs-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: work) }
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    let referenceService = "com.odr.bench.refs"
    let referenceStore = try SecretServiceStore(service: referenceService)
    try await referenceStore.deleteAll()
    for index in 1...50 { try await referenceStore.setValue("value-\(index)-\(UUID().uuidString)", for: "K\(index)") }
    let envFile = work.appending(path: ".env")
    try Data((1...50).map { "VAR_\($0)=odr://K\($0)\n" }.joined().utf8).write(to: envFile)
    var env = ProcessInfo.processInfo.environment
    env["XDG_STATE_HOME"] = work.appending(path: "state").path
    let loop = "for i in $(seq 1 50); do secret-tool lookup service \(referenceService) key K$i >/dev/null || exit 1; done"
    var files: [Duration] = [], keys: [Duration] = [], lookups: [Duration] = []
    for _ in 0..<referenceRuns {
      files.append(try time(odrPath, ["exec", "--no-mask", "--service", referenceService, "--env-file", envFile.path, "--", "/bin/true"], environment: env))
      keys.append(try time(odrPath, ["exec", "--no-mask", "--service", referenceService, "--", "/bin/true"], environment: env))
      lookups.append(try time("/bin/bash", ["-c", loop]))
    }
    try await referenceStore.deleteAll()
    report("(l) 50 references:  odr exec --env-file \(ms(median(files)))   odr exec (same 50 keys) \(ms(median(keys)))   ratio \(ratio(median(files), median(keys))) (target ≤ 1.10×)   50 × secret-tool lookup \(ms(median(lookups)))   speed-up \(ratio(median(lookups), median(files))) (target ≥ 10×)   [median of \(referenceRuns)]")
  }
}

// (m) Hosting (issue 13), against a real nginx on 127.0.0.1:
//  (1) a fleet of 50 machines (50 caches) running `odr begin` at once of a
//      tag they already have: bytes nginx sent each (the catalog is
//      revalidated: 304s) and the wall time, vs 50 concurrent `curl -fsS`
//      of catalog.json;
//  (2) a 256 MiB download killed at half-way, then run again: the fraction
//      of the blob downloaded again (nginx's log);
//  (3) `odr prefetch` of 20 × 8 MiB vs `curl --parallel --parallel-max 6`
//      of the same blobs followed by `sha256sum` of them.
if wants("m") {
  let hostingRuns = Int(ProcessInfo.processInfo.environment["ODR_BENCH_HOSTING_RUNS"] ?? "") ?? 5
  if hostingRuns > 0 {
    let work = FileManager.default.temporaryDirectory.appending(path: "odr-bench-host-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: work) }
    let source = work.appending(path: "src")
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    func randomFile(_ url: URL, bytes count: Int, seed: Int) async throws {
      var bytes = Data(count: count)
      bytes.withUnsafeMutableBytes { buffer in
        var state = UInt64(seed + 1) &* 0x9e3779b97f4a7c15
        for offset in stride(from: 0, to: buffer.count, by: 8) {
          state = state &* 6364136223846793005 &+ 1442695040888963407
          buffer.storeBytes(of: state, toByteOffset: offset, as: UInt64.self)
        }
      }
      try bytes.write(to: url)
    }
    var entries = [#""Level": {"category": "onDemand", "files": ["level.bin"]}"#, #""Movie": {"category": "onDemand", "files": ["movie.bin"]}"#]
    try await randomFile(source.appending(path: "level.bin"), bytes: 64 << 10, seed: 99)
    try await randomFile(source.appending(path: "movie.bin"), bytes: 256 << 20, seed: 98)
    for index in 0..<20 {
      try await randomFile(source.appending(path: "t\(index).bin"), bytes: 8 << 20, seed: index)
      entries.append(#""T\#(index)": {"category": "prefetch", "order": \#(index), "files": ["t\#(index).bin"]}"#)
    }
    try Data(#"{"bundle": "com.odr.bench.host", "tags": {\#(entries.joined(separator: ", "))}}"#.utf8).write(to: source.appending(path: "tags.json"))
    var env = ProcessInfo.processInfo.environment
    env["XDG_STATE_HOME"] = work.appending(path: "state").path
    env["XDG_CACHE_HOME"] = work.appending(path: "cache").path
    try time(odrPath, ["pack", source.path, "--output", work.appending(path: "pub").path, "--quiet"], environment: env)
    let nginx = try Nginx(root: work.appending(path: "pub"))
    defer { nginx.stop() }
    let catalogURL = nginx.url.absoluteString

    // (1) The fleet: each machine has its own cache and state, warmed once.
    let fleet = 50
    for machine in 0..<fleet {
      var one = env
      one["XDG_CACHE_HOME"] = work.appending(path: "fleet/\(machine)/cache").path
      one["XDG_STATE_HOME"] = work.appending(path: "fleet/\(machine)/state").path
      try time(odrPath, ["begin", "Level", "--catalog", catalogURL, "--quiet"], environment: one)
    }
    let odrFleet = "for i in $(seq 0 \(fleet - 1)); do XDG_CACHE_HOME=\(work.path)/fleet/$i/cache XDG_STATE_HOME=\(work.path)/fleet/$i/state \(odrPath) begin Level --catalog \(catalogURL) --quiet & done; wait"
    let curlFleet = "for i in $(seq 1 \(fleet)); do curl -fsS -o /dev/null \(catalogURL)catalog.json & done; wait"
    var odrTimes: [Duration] = [], curlTimes: [Duration] = []
    var perClient: [Double] = []
    for _ in 0..<hostingRuns {
      let before = nginx.requests.count
      odrTimes.append(try time("/bin/bash", ["-c", odrFleet]))
      let served = nginx.requests.dropFirst(before)
      perClient.append(Double(served.reduce(0) { $0 + $1.totalBytes }) / Double(fleet))
      guard served.allSatisfy({ $0.path == "/catalog.json" && $0.status == 304 }) else {
        fatalError("(m) the fleet did not only revalidate: \(served.map { "\($0.path) \($0.status)" }.prefix(5))")
      }
      curlTimes.append(try time("/bin/bash", ["-c", curlFleet]))
    }
    let bytes = perClient.sorted()[perClient.count / 2]
    report("(m1) fleet of \(fleet) concurrent `odr begin` of an unchanged tag: \(String(format: "%.0f", bytes)) bytes served per client, all 304 (target ≤ 1024)   wall \(ms(median(odrTimes)))   50 × curl catalog.json \(ms(median(curlTimes)))   ratio \(ratio(median(odrTimes), median(curlTimes)))   (target ≤ 1.50×, issue 39)   [median of \(hostingRuns)]")

    // One process per command: the revalidation above, under strace.
    var traced = env
    traced["XDG_CACHE_HOME"] = work.appending(path: "fleet/0/cache").path
    traced["XDG_STATE_HOME"] = work.appending(path: "fleet/0/state").path
    let trace = try await Command.run("/usr/bin/strace", ["-f", "-e", "trace=execve", "-o", "/dev/stderr", odrPath, "begin", "Level", "--catalog", catalogURL, "--quiet"], environment: traced)
    let execs = trace.stderr.split(separator: "\n").filter { $0.contains("execve(") && !$0.contains("= -1") }
    report("(m1) processes: `odr begin` over http runs \(execs.count) execve (target 1: no hand-off)")

    // (2) Resume after kill, through a 256 MiB/s limit so half-way is visible.
    let slow = try Nginx(root: work.appending(path: "pub"), rate: "256m")
    defer { slow.stop() }
    let movie = String(try await Command.run("/usr/bin/sha256sum", [source.appending(path: "movie.bin").path]).stdout.prefix(64))
    var fractions: [Double] = []
    for _ in 0..<min(hostingRuns, 3) {
      try? FileManager.default.removeItem(at: work.appending(path: "cache"))
      let process = Process()
      process.executableURL = URL(filePath: odrPath)
      process.arguments = ["begin", "Movie", "--catalog", slow.url.absoluteString, "--quiet"]
      process.environment = env
      try process.run()
      let partial = work.appending(path: "cache/odr/com.odr.bench.host/partial/\(movie)")
      while process.isRunning, ((try? FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? Int) ?? 0) < 128 << 20 { usleep(1_000) }
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      let before = slow.requests.count
      try time(odrPath, ["begin", "Movie", "--catalog", slow.url.absoluteString, "--quiet"], environment: env)
      let again = slow.requests.dropFirst(before).filter { $0.path.hasSuffix(movie) }.reduce(0) { $0 + $1.bytes }
      fractions.append(Double(again) / Double(256 << 20))
    }
    report("(m2) 256 MiB download killed at 50 %, run again: \(String(format: "%.3f", fractions.sorted()[fractions.count / 2])) of the blob downloaded again (target ≤ 0.55)   [median of \(fractions.count)]")

    // (3) Prefetch vs curl --parallel + sha256sum.
    let blobs = (0..<20).map { "t\($0).bin" }.map { name -> String in
      (try? Command.runBlocking("/usr/bin/sha256sum", [source.appending(path: name).path]).stdout.prefix(64)).map(String.init) ?? ""
    }
    let curlParallel = "cd \(work.path)/curl && curl -fsS --no-progress-meter --parallel --parallel-max 6 " + blobs.map { "-o \($0) \(catalogURL)blobs/\($0)" }.joined(separator: " ") + " && sha256sum \(blobs.joined(separator: " ")) > /dev/null"
    odrTimes = []
    curlTimes = []
    for _ in 0..<hostingRuns {
      try? FileManager.default.removeItem(at: work.appending(path: "cache"))
      odrTimes.append(try time(odrPath, ["prefetch", "--catalog", catalogURL, "--quiet"], environment: env))
      try? FileManager.default.removeItem(at: work.appending(path: "curl"))
      try FileManager.default.createDirectory(at: work.appending(path: "curl"), withIntermediateDirectories: true)
      curlTimes.append(try time("/bin/bash", ["-c", curlParallel]))
    }
    report("(m3) prefetch 20 × 8 MiB from nginx: odr prefetch \(ms(median(odrTimes)))   curl --parallel-max 6 + sha256sum \(ms(median(curlTimes)))   ratio \(ratio(median(odrTimes), median(curlTimes)))   (target ≤ 1.10×)   [median of \(hostingRuns)]")
  }
}

// (n) One key through the provider, on a service holding 500 keys, vs one
// bare secret_password_lookup: a fresh provider per call (nothing cached),
// so each call is its real first read.
if wants("n") {
  let bulk = try SecretServiceStore(service: service + ".provider")
  try await bulk.deleteAll()
  for index in 0..<500 { try await bulk.setValue("v-\(index)", for: String(format: "K%03d", index)) }
  try await bulk.setValue("k-bench-value", for: "Weather")
  let perRun = 50
  var providerReads: [Duration] = [], bareLookups: [Duration] = []
  _ = try await APIKeyProvider(store: bulk).key("Weather"); _ = bareLookup("Weather", in: bulk.service)
  for _ in 0..<runs {
    var ours = Duration.zero, bare = Duration.zero
    for _ in 0..<perRun {
      let provider = APIKeyProvider(store: bulk)
      var start = clock.now
      let value = try await provider.key("Weather")
      ours += clock.now - start
      precondition(value == "k-bench-value")
      start = clock.now
      precondition(bareLookup("Weather", in: bulk.service))
      bare += clock.now - start
    }
    providerReads.append(ours / perRun)
    bareLookups.append(bare / perRun)
  }
  var wholeService: [Duration] = []
  for _ in 0..<5 {
    let start = clock.now
    let count = try await bulk.keys().count
    wholeService.append(clock.now - start)
    precondition(count == 501)
  }
  report("(n) provider.key on a service of 501 keys \(ms(median(providerReads)))   bare secret_password_lookup of the same \(ms(median(bareLookups)))   ratio \(ratio(median(providerReads), median(bareLookups)))   (target ≤ 1.20×)   [reading every key, as the provider did before: \(ms(median(wholeService)))]")
  try await bulk.deleteAll()
}

// (o) Conformance costs (issue 26): `odr fetch` of a 500-key pack encrypted
// to a post-quantum identity vs the same keys encrypted to an X25519 one
// (both identities in the keyring, alternating, each into an emptied
// keyring); the header bytes one post-quantum recipient adds; and a 1 GiB
// `odr publish` to moto_server (signature checking on), streamed from disk,
// vs boto3's upload_file of the same file, with odr's peak RSS.
if wants("o") {
  let pqRuns = Int(ProcessInfo.processInfo.environment["ODR_BENCH_PQ_RUNS"] ?? "") ?? 9
  let work = FileManager.default.temporaryDirectory.appending(path: "odr-bench-pq-\(UUID().uuidString)")
  defer { try? FileManager.default.removeItem(at: work) }
  let pqService = "com.odr.bench.pq"
  let (source, env) = try apiKeysSource(in: work, bundle: pqService)
  let (pq, classic) = (try AgeIdentity(postQuantum: true), AgeIdentity())
  let names = ["bench-pq-\(UUID().uuidString.prefix(8))", "bench-x-\(UUID().uuidString.prefix(8))"]
  let identities = try SecretServiceStore(service: "odr.identity")
  try await identities.setValue(pq.secretKeyString, for: names[0])
  try await identities.setValue(classic.secretKeyString, for: names[1])
  try time(odrPath, ["pack", source.path, "--output", work.appending(path: "pq").path, "--quiet", "--recipient", pq.recipient.description], environment: env)
  try time(odrPath, ["pack", source.path, "--output", work.appending(path: "x").path, "--quiet", "--recipient", classic.recipient.description], environment: env)
  let store = try SecretServiceStore(service: pqService)
  var pqTimes: [Duration] = [], classicTimes: [Duration] = []
  var classicEnv = env
  classicEnv["XDG_STATE_HOME"] = work.appending(path: "state-x").path
  for run in 0..<pqRuns {
    for isPQ in run % 2 == 0 ? [true, false] : [false, true] {
      try await store.deleteAll()
      let args = ["fetch", "APIKeys", "--catalog", work.appending(path: isPQ ? "pq" : "x").path, "--quiet"]
      if isPQ { pqTimes.append(try time(odrPath, args, environment: env)) } else { classicTimes.append(try time(odrPath, args, environment: classicEnv)) }
    }
  }
  try await store.deleteAll()
  for name in names { _ = try await identities.deleteValue(for: name) }
  let one = try Age.encrypt(Data(), to: [pq.recipient]).count, two = try Age.encrypt(Data(), to: [pq.recipient, try AgeIdentity(postQuantum: true).recipient]).count
  let x1 = try Age.encrypt(Data(), to: [classic.recipient]).count, x2 = try Age.encrypt(Data(), to: [classic.recipient, AgeIdentity().recipient]).count
  report("(o) fetch 500, post-quantum vs X25519 pack:  \(ms(median(pqTimes)))   vs \(ms(median(classicTimes)))   ratio \(ratio(median(pqTimes), median(classicTimes)))   (target ≤ 1.05×)   [median of \(pqRuns)]; header bytes per recipient: post-quantum \(two - one) (spec: ~1.6 KiB), X25519 \(x2 - x1)")

  // 1 GiB to moto, streamed.
  let big = work.appending(path: "big")
  try FileManager.default.createDirectory(at: big, withIntermediateDirectories: true)
  try Data(#"{"bundle": "com.odr.bench.upload", "tags": {"Movie": {"category": "onDemand", "files": ["movie.bin"]}}}"#.utf8).write(to: big.appending(path: "tags.json"))
  let movie = big.appending(path: "movie.bin")
  _ = FileManager.default.createFile(atPath: movie.path, contents: nil)
  let handle = try FileHandle(forWritingTo: movie)
  var state: UInt64 = 0x9e3779b97f4a7c15
  for _ in 0..<(1 << 10) {  // 1,024 × 1 MiB of pseudo-random bytes
    var chunk = Data(count: 1 << 20)
    chunk.withUnsafeMutableBytes { buffer in
      for offset in stride(from: 0, to: buffer.count, by: 8) {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        buffer.storeBytes(of: state, toByteOffset: offset, as: UInt64.self)
      }
    }
    handle.write(chunk)
  }
  try handle.close()
  try time(odrPath, ["pack", big.path, "--output", work.appending(path: "bigpub").path, "--quiet"], environment: env)
  try FileManager.default.removeItem(at: movie)
  let moto = try await MotoServer.start()
  let user = moto.environment(moto.user, base: env)
  let start = clock.now
  let published = try await Command.run("/usr/bin/time", ["-f", "%M", odrPath, "publish", work.appending(path: "bigpub").path, "s3://\(moto.bucket)/big", "--quiet"], environment: user)
  let odrUpload = clock.now - start
  guard published.status == 0 else { fatalError("odr publish failed: \(published.stderr)") }
  let rss = Int(published.stderr.split(separator: "\n").last ?? "") ?? 0
  let blob = try FileManager.default.contentsOfDirectory(atPath: work.appending(path: "bigpub/blobs").path)[0]
  let botoStart = clock.now
  let boto = try await moto.boto("s3.upload_file('\(work.appending(path: "bigpub/blobs/\(blob)").path)', '\(moto.bucket)', 'boto/big.bin')")
  let botoUpload = clock.now - botoStart
  guard boto.status == 0 else { fatalError("boto3 upload failed: \(boto.stderr)") }
  report("(o) publish 1 GiB to moto_server:  odr \(ms(odrUpload))   boto3 upload_file \(ms(botoUpload))   ratio \(ratio(odrUpload, botoUpload)); odr peak RSS \(rss / 1024) MiB (target ≤ 64 MiB)   [one run each]")
}

// (p) odr exec --proxy (issues 40, 48): curl and a keep-alive Python client
// in the command's sandbox, through the proxy (CONNECT intercepted, the key
// put in its header) against the same https API directly (the value in the
// environment, no sandbox), alternating; and `odr exec --proxy -- true`
// (bubblewrap, the sandbox's first process, the proxy) against `odr exec
// --no-mask -- true`.
if wants("p") {
  let work = FileManager.default.temporaryDirectory.appending(path: "odr-bench-proxy-\(UUID().uuidString)")
  defer { try? FileManager.default.removeItem(at: work) }
  try FileManager.default.createDirectory(at: work.appending(path: "www"), withIntermediateDirectories: true)
  let secret = "bench-\(UUID().uuidString)"
  // A test CA and a leaf for 127.0.0.1 (openssl), trusted by odr through SSL_CERT_FILE.
  for arguments in [["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "1",
                     "-subj", "/CN=bench CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"],
                    ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/O=bench"],
                    ["x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "leaf.pem", "-days", "1",
                     "-extfile", "ext"]] {
    try Data("subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n".utf8).write(to: work.appending(path: "ext"))
    let made = try await Command.run("/bin/sh", ["-c", "cd \"$0\" && exec openssl \"$@\" 2>/dev/null", work.path] + arguments)
    guard made.status == 0 else { fatalError("openssl \(arguments): \(made.stderr)") }
  }
  let system = (try? String(contentsOfFile: "/etc/ssl/certs/ca-certificates.crt", encoding: .utf8)) ?? ""
  try Data((system + "\n" + String(contentsOf: work.appending(path: "ca.pem"), encoding: .utf8)).utf8).write(to: work.appending(path: "trust.pem"))
  let nginx = try await Nginx.start(root: work.appending(path: "www"),
                                    locations: #"location = /header { if ($http_authorization = "Bearer \#(secret)") { return 200 "ok\n"; } return 401; } location = /aws { return 200 "ok\n"; }"#,
                                    tls: (work.appending(path: "leaf.pem"), work.appending(path: "leaf.key")))
  defer { nginx.stop() }
  let bundle = "com.odr.bench.proxy"
  let source = work.appending(path: "src")
  try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
  try Data(#"{"bundle": "\#(bundle)", "tags": {"APIKeys": {"category": "prefetch", "secrets": true, "files": ["APIKeys.json"]}}}"#.utf8).write(to: source.appending(path: "tags.json"))
  try Data(#"""
    {"keys": {"Bench": {"value": "\#(secret)", "header": "Authorization", "scheme": "Bearer", "hosts": ["127.0.0.1"]},
              "BenchAWSKeyID": {"value": "AKIABENCHBENCHBENCH0", "env": "AWS_ACCESS_KEY_ID", "hosts": ["127.0.0.1"]},
              "BenchAWSSecret": {"value": "bench/Secret+bench/Secret+bench/Secret+0", "env": "AWS_SECRET_ACCESS_KEY", "hosts": ["127.0.0.1"]}}}
    """#.utf8).write(to: source.appending(path: "APIKeys.json"))
  var env = ProcessInfo.processInfo.environment
  env["XDG_CACHE_HOME"] = work.appending(path: "cache").path
  env["XDG_STATE_HOME"] = work.appending(path: "state").path
  env["SSL_CERT_FILE"] = work.appending(path: "trust.pem").path
  env["CURL_CA_BUNDLE"] = work.appending(path: "trust.pem").path
  env["REQUESTS_CA_BUNDLE"] = work.appending(path: "trust.pem").path
  try time(odrPath, ["pack", source.path, "--output", work.appending(path: "pub").path, "--quiet", "--plaintext-secrets"], environment: env)
  try time(odrPath, ["fetch", "APIKeys", "--catalog", work.appending(path: "pub").path, "--quiet"], environment: env)
  let url = "https://127.0.0.1:\(nginx.port)/header"
  // Seconds the loop inside the command took (odr's start excluded).
  func loop(_ proxied: Bool, _ body: String) async throws -> String {
    let arguments = ["exec", "--service", bundle] + (proxied ? ["--proxy"] : ["--no-mask"]) + ["--", "/bin/sh", "-c", body]
    let result = try await Command.run(odrPath, arguments, environment: env)
    guard result.status == 0 else { fatalError("odr \(arguments): \(result.stderr)") }
    return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
  }
  let curls = #"s=$(date +%s%N); for i in $(seq 200); do curl -sSf -o /dev/null -H "Authorization: Bearer $BENCH" "\#(url)" || exit 1; done; echo $(( $(date +%s%N) - s ))"#
  var through: [Duration] = [], direct: [Duration] = []
  for _ in 0..<5 {
    through.append(.nanoseconds(Int64(try await loop(true, curls))!))
    direct.append(.nanoseconds(Int64(try await loop(false, curls))!))
  }
  report("(p) 200 sequential curl (a new connection each): through the proxy \(ms(median(through)))   direct \(ms(median(direct)))   ratio \(ratio(median(through), median(direct)))   (target ≤ 1.50×)   [alternating, median of \(through.count)]")
  let script = Paths.packageRoot.appending(path: "Benchmarks/odr-bench/keepalive.py").path
  var proxied: [[String: Double]] = [], plain: [[String: Double]] = []
  for _ in 0..<5 {
    for isProxied in [true, false] {
      let text = try await loop(isProxied, "exec python3 '\(script)' '\(url)' BENCH 1000")
      let figures = try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Double]
      if isProxied { proxied.append(figures) } else { plain.append(figures) }
    }
  }
  func med(_ runs: [[String: Double]], _ key: String) -> Double { runs.map { $0[key]! }.sorted()[runs.count / 2] }
  report(String(format: "(p) 1,000 keep-alive GETs, one Python client (requests.Session): through the proxy %.0f ms   direct %.0f ms   ratio %.2f×   (target ≤ 1.20×); p99 %.2f vs %.2f ms: +%.2f ms (target ≤ +1 ms); p50 %.2f vs %.2f ms   [alternating, median of %d]",
                       med(proxied, "total") * 1000, med(plain, "total") * 1000, med(proxied, "total") / med(plain, "total"),
                       med(proxied, "p99"), med(plain, "p99"), med(proxied, "p99") - med(plain, "p99"), med(proxied, "p50"), med(plain, "p50"), proxied.count))
  // SigV4: the proxy's check and re-signing (issue 49), against the same
  // client's signed request that goes through unchanged, pair by pair.
  let sigv4 = Paths.packageRoot.appending(path: "Benchmarks/odr-bench/sigv4.py").path
  var resigned: [Double] = [], passed: [Double] = []
  for _ in 0..<5 {
    let text = try await loop(true, "exec python3 '\(sigv4)' 'https://127.0.0.1:\(nginx.port)/aws' 300")
    let figures = try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Double]
    resigned.append(figures["resigned"]!)
    passed.append(figures["passed"]!)
  }
  let (resignedP50, passedP50) = (resigned.sorted()[resigned.count / 2], passed.sorted()[passed.count / 2])
  report(String(format: "(p) SigV4 through the proxy, keep-alive: re-signed (checked, then signed with the real secret) p50 %.2f ms   passed unchanged p50 %.2f ms   added +%.2f ms (target ≤ +1 ms)   [300 pairs, median of %d runs]",
                resignedP50, passedP50, resignedP50 - passedP50, resigned.count))
  var proxyExec: [Duration] = [], plainExec: [Duration] = [], unsandboxed: [Duration] = []
  for _ in 0..<max(runs, 21) {
    proxyExec.append(try time(odrPath, ["exec", "--proxy", "--service", bundle, "--", "true"], environment: env))
    plainExec.append(try time(odrPath, ["exec", "--no-mask", "--service", bundle, "--", "true"], environment: env))
    unsandboxed.append(try time(odrPath, ["exec", "--proxy", "--no-sandbox", "--service", bundle, "--", "true"], environment: env))
  }
  report(String(format: "(p) odr exec --proxy -- true %@   odr exec --no-mask -- true %@   difference +%.2f ms (target ≤ +60 ms); without the sandbox (--no-sandbox) %@   [alternating, median of %d]",
                ms(median(proxyExec)), ms(median(plainExec)), (median(proxyExec) - median(plainExec)) / .milliseconds(1), ms(median(unsandboxed)),
                proxyExec.count))
  // Server-sent events (issue 49): each event's arrival after it was
  // sent, through the proxy (intercepted, masked) against directly. Last:
  // while the server (a Foundation Process) ran, every other Process's
  // wait took ~50 ms here.
  let sse = Paths.packageRoot.appending(path: "Benchmarks/odr-bench/sse.py").path
  let events = Process()
  events.executableURL = URL(filePath: "/usr/bin/env")
  events.arguments = ["python3", sse, "serve", work.appending(path: "leaf.pem").path, work.appending(path: "leaf.key").path, "300"]
  let announced = Pipe()
  events.standardOutput = announced
  try events.run()
  let eventsPort = String(decoding: announced.fileHandleForReading.availableData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
  var sseThrough: [Double] = [], sseDirect: [Double] = []
  for _ in 0..<5 {
    for isProxied in [true, false] {
      let text = try await loop(isProxied, "exec python3 '\(sse)' client 'https://127.0.0.1:\(eventsPort)/'")
      let p50 = (try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Double])["p50"]!
      if isProxied { sseThrough.append(p50) } else { sseDirect.append(p50) }
    }
  }
  kill(events.processIdentifier, SIGKILL)  // SIGTERM may be blocked in it (a child of Foundation's Process keeps the spawning thread's mask)
  events.waitUntilExit()
  let (sseProxied, ssePlain) = (sseThrough.sorted()[2], sseDirect.sorted()[2])
  report(String(format: "(p) server-sent events (300, one every 10 ms): arrival after sending p50 through the proxy %.2f ms   direct %.2f ms   added +%.2f ms (target ≤ +1 ms)   [alternating, median of 5]",
                sseProxied, ssePlain, sseProxied - ssePlain))
  try await SecretServiceStore(service: bundle).deleteAll()
}

// (q) Keys for every process (issue 41): a read from the kernel store
// against the process floor; a warm provider read against a keyring
// lookup; one --watch revalidation of an unchanged catalog on nginx
// against one curl of catalog.json.
if wants("q") {
  let kernel = try KernelKeyringStore(service: "com.odr.bench.kernel")
  try kernel.setValue("kernel-\(UUID().uuidString)", for: "Weather")
  defer { _ = try? kernel.deleteAll() }  // a failed clean-up leaves one keyring until reboot
  let getKernel = ["get", "Weather", "--service", kernel.service, "--store", "kernel"]
  try time(odrPath, getKernel)
  var kernelGets: [Duration] = [], versions: [Duration] = [], keyctls: [Duration] = []
  for _ in 0..<max(runs, 51) {
    kernelGets.append(try time(odrPath, getKernel))
    versions.append(try time(odrPath, ["--version"]))
    keyctls.append(try time("/usr/bin/keyctl", ["pipe", "%user:odr:\(kernel.service):Weather"]))
  }
  report("(q) odr get --store kernel \(ms(median(kernelGets))) \(spread(kernelGets))   odr --version \(ms(median(versions)))   ratio \(ratio(median(kernelGets), median(versions)))   (target ≤ 1.10×)   keyctl pipe \(ms(median(keyctls)))   [alternating, median of \(kernelGets.count)]")

  // A warm provider.key: 10,000 reads of a key the provider read before,
  // against one keyring lookup each (SecretServiceStore.value).
  let provider = APIKeyProvider(store: store)
  _ = try await provider.key("Weather")
  var warm: [Duration] = [], lookups: [Duration] = []
  for _ in 0..<max(runs, 21) {
    let start = clock.now
    for _ in 0..<10_000 { _ = try await provider.key("Weather") }
    warm.append((clock.now - start) / 10_000)
    let looked = clock.now
    _ = try await store.value(for: "Weather")
    lookups.append(clock.now - looked)
  }
  report(String(format: "(q) warm provider.key %.2f µs   one keyring lookup %@   (target ≤ 50 µs)   [median of %d runs of 10,000]",
                median(warm) / .microseconds(1), ms(median(lookups)), warm.count))

  // --watch: odr exec --fetch … --watch 10ms -- sleep 3 revalidates back to
  // back; each cycle is the 10 ms interval and one revalidation (a 304).
  let work = FileManager.default.temporaryDirectory.appending(path: "odr-bench-watch-\(UUID().uuidString)")
  defer { try? FileManager.default.removeItem(at: work) }
  let source = work.appending(path: "src")
  try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
  try Data(#"{"bundle": "com.odr.bench.watch", "tags": {"APIKeys": {"category": "prefetch", "secrets": true, "files": ["APIKeys.json"]}}}"#.utf8)
    .write(to: source.appending(path: "tags.json"))
  try Data(#"{"keys": {"Weather": {"value": "w-\#(UUID().uuidString)"}}}"#.utf8).write(to: source.appending(path: "APIKeys.json"))
  var env = ProcessInfo.processInfo.environment
  env["XDG_CACHE_HOME"] = work.appending(path: "cache").path
  env["XDG_STATE_HOME"] = work.appending(path: "state").path
  try time(odrPath, ["pack", source.path, "--output", work.appending(path: "pub").path, "--quiet", "--plaintext-secrets"], environment: env)
  let nginx = try await Nginx.start(root: work.appending(path: "pub"))
  defer { nginx.stop() }
  let catalogURL = nginx.url.appending(path: "catalog.json").absoluteString
  var cycles: [Duration] = [], curls: [Duration] = []
  for _ in 0..<3 {
    let before = nginx.requests.count { $0.status == 304 }
    let watched = try time(odrPath, ["exec", "--fetch", "APIKeys", "--catalog", nginx.url.absoluteString, "--watch", "10ms", "--", "sleep", "3"], environment: env)
    let revalidations = try await nginx.requests(atLeast: before + 1) { $0.status == 304 }.count - before
    cycles.append(watched / revalidations - .milliseconds(10))
    for _ in 0..<11 { curls.append(try time("/usr/bin/curl", ["-sSf", "-o", "/dev/null", catalogURL])) }
  }
  report("(q) --watch: one revalidation of an unchanged catalog (304) \(ms(median(cycles)))   one curl of catalog.json \(ms(median(curls)))   ratio \(ratio(median(cycles), median(curls)))   (target ≤ 1.20×)   [3 runs of 3 s at --watch 10ms, less the interval; 33 curls]")
}

// (r) Post-quantum signing (issue 52): `odr pack --sign-key-file` of a
// 500-key pack with a hybrid Ed25519 + ML-DSA-65 key vs an Ed25519 key
// (alternating, each into a fresh folder, medians).
if wants("r") {
  let work = FileManager.default.temporaryDirectory.appending(path: "odr-bench-pqsign-\(UUID().uuidString)")
  defer { try? FileManager.default.removeItem(at: work) }
  let (source, env) = try apiKeysSource(in: work, bundle: "com.odr.bench.pqsign")
  var files: [Bool: String] = [:]
  for postQuantum in [false, true] {
    let file = work.appending(path: postQuantum ? "pq.key" : "ed.key")
    try Data(try SigningKey(postQuantum: postQuantum).secretKeyString.utf8).write(to: file)
    files[postQuantum] = file.path
  }
  var times: [Bool: [Duration]] = [false: [], true: []]
  for run in 0..<runs {
    for postQuantum in run % 2 == 0 ? [true, false] : [false, true] {
      let output = work.appending(path: "out-\(run)-\(postQuantum)").path
      times[postQuantum]!.append(try time(odrPath, ["pack", source.path, "--output", output, "--quiet", "--plaintext-secrets", "--sign-key-file", files[postQuantum]!], environment: env))
    }
  }
  let pq = median(times[true]!), ed = median(times[false]!)
  report("(r) odr pack --sign, hybrid Ed25519 + ML-DSA-65 vs Ed25519 key:  \(ms(pq))   vs \(ms(ed))   ratio \(ratio(pq, ed))   (target ≤ 1.2×)   [median of \(runs)]")
}
