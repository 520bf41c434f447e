public import Foundation
import ODRBase
import Synchronization

/// A bucket of its own on a real `moto_server` (PyPI's `moto[server]`) on
/// 127.0.0.1 with signature checking on. One server serves the whole test
/// process (starting one costs a second of CPU): its first six actions are
/// unauthenticated (`INITIAL_NO_AUTH_ACTION_COUNT`) and set up, through its
/// IAM API, a user allowed to use the buckets and a role that user may
/// assume; the user then makes ``bucketCount`` empty buckets, one for each
/// ``start()`` (resources/fixtures/moto-setup.py). Every later request must
/// be signed by those credentials.
public struct MotoServer: Sendable {
  /// Credentials moto accepts.
  public struct Credentials: Sendable, Decodable {
    public let accessKeyId: String
    public let secretAccessKey: String
    public let sessionToken: String?

    public init(accessKeyId: String, secretAccessKey: String, sessionToken: String?) {
      self.accessKeyId = accessKeyId
      self.secretAccessKey = secretAccessKey
      self.sessionToken = sessionToken
    }
  }

  /// The running server and its credentials.
  final class Process: Sendable {
    let endpoint: URL
    let user: Credentials
    let session: Credentials
    let buckets = Mutex(0)
    private let daemon: Daemon
    /// The write end of the server's stdin: it is closed only when this
    /// process ends, however it ends, and the server then exits.
    private let lifeline: Int32

    init() throws {
      let python = try MotoServer.python()
      let log = FileManager.default.temporaryDirectory.appending(path: "odr-moto-\(UUID().uuidString).log")
      let portFile = log.appendingPathExtension("port")
      defer {
        dropping(.cleanup) { try FileManager.default.removeItem(at: log) }
        dropping(.cleanup) { try FileManager.default.removeItem(at: portFile) }
      }
      var environment = ProcessInfo.processInfo.environment
      environment["INITIAL_NO_AUTH_ACTION_COUNT"] = "6"
      for name in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"] { environment[name] = nil }
      var ends: [Int32] = [0, 0]
      guard pipe(&ends) == 0 else { throw TestFailure("pipe: \(String(cString: strerror(errno)))") }
      for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
      lifeline = ends[1]
      // The server binds port 0 and writes the port it got (renamed into
      // place, so it is read whole): a port chosen here and bound later
      // could be taken in between by another test's server, and the
      // set-up would then talk to that one.
      let serve = """
        import os, sys
        from moto.server import ThreadedMotoServer
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        with open(sys.argv[1] + ".tmp", "w") as f: f.write(str(server.get_host_and_port()[1]))
        os.rename(sys.argv[1] + ".tmp", sys.argv[1])
        sys.stdin.buffer.read()
        os._exit(0)
        """
      daemon = try Daemon(python, ["-c", serve, portFile.path], environment: environment, log: log, stdin: ends[0])
      close(ends[0])
      var port: Int?
      for _ in 0..<1500 {
        // not there yet: the loop waits for it
        port = dropping(.isTheAnswer) { try String(contentsOf: portFile, encoding: .utf8) }.flatMap { Int($0) }
        guard port == nil, daemon.isRunning else { break }
        usleep(10_000)
      }
      guard let port else {
        daemon.stop()
        // the log, if any, explains the failure being thrown
        let text = dropping(.messageOnly) { try String(contentsOf: log, encoding: .utf8) } ?? ""
        throw TestFailure("moto_server did not start: \(text.suffix(400)). Run scripts/bootstrap.")
      }
      endpoint = URL(string: "http://127.0.0.1:\(port)")!
      let setup = try Command.runBlocking(python, [Paths.packageRoot.appending(path: "resources/fixtures/moto-setup.py").path, endpoint.absoluteString,
                                                   MotoServer.bucketPrefix, "\(MotoServer.bucketCount)"])
      guard setup.status == 0, let data = setup.stdout.data(using: .utf8),
            // not the expected JSON: the error below says so
            let parsed = dropping(.isTheAnswer, { try JSONDecoder().decode([String: Credentials].self, from: data) }),
            let user = parsed["user"], let session = parsed["session"] else {
        daemon.stop()
        throw TestFailure("moto set-up failed: \(setup.stderr.suffix(600))")
      }
      self.user = user
      self.session = session
    }
  }

  /// How many tests of one process may take a bucket.
  static let bucketCount = 12
  static let bucketPrefix = "odr-private"
  /// The server, started by the first ``start()``; a failed start is
  /// every later one's failure too.
  private static let shared = Mutex<Result<Process, any Error>?>(nil)

  public let endpoint: URL
  /// This test's bucket, empty when it got it.
  public let bucket: String
  /// The IAM user's long-term access key.
  public let user: Credentials
  /// Temporary credentials (with a session token) of the assumed role.
  public let session: Credentials

  /// An empty bucket of its own on the process's server, which the first
  /// call starts (on a thread of its own, not the cooperative pool).
  public static func start() async throws -> MotoServer {
    let server = try await Command.offPool { () throws -> Process in
      try shared.withLock { shared in
        if shared == nil { shared = Result { try Process() } }
        return try shared!.get()
      }
    }
    let taken = server.buckets.withLock { count in
      count += 1
      return count
    }
    guard taken <= bucketCount else {
      throw TestFailure("Every one of the moto server's \(bucketCount) buckets is taken: raise MotoServer.bucketCount.")
    }
    return MotoServer(endpoint: server.endpoint, bucket: "\(bucketPrefix)-\(taken)", user: server.user, session: server.session)
  }

  /// The environment of a client using `credentials` against this server.
  public func environment(_ credentials: Credentials?, base: [String: String]) -> [String: String] {
    var env = base
    for name in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION"] { env[name] = nil }
    env["AWS_ENDPOINT_URL"] = endpoint.absoluteString
    env["AWS_SHARED_CREDENTIALS_FILE"] = "/nonexistent"
    if let credentials {
      env["AWS_ACCESS_KEY_ID"] = credentials.accessKeyId
      env["AWS_SECRET_ACCESS_KEY"] = credentials.secretAccessKey
      env["AWS_SESSION_TOKEN"] = credentials.sessionToken
    }
    return env
  }

  /// Runs a Python snippet with boto3 against this server as the user
  /// (`s3` is a client, `session` the user's session, `endpoint` the
  /// server's URL); what it prints.
  public func boto(_ code: String) async throws -> Command.Result {
    let prelude = """
      import boto3
      endpoint = "\(endpoint.absoluteString)"
      session = boto3.session.Session(aws_access_key_id="\(user.accessKeyId)", aws_secret_access_key="\(user.secretAccessKey)",
                                      region_name="us-east-1")
      s3 = session.client("s3", endpoint_url=endpoint)

      """
    return try await Command.run(try Self.python(), ["-c", prelude + code])
  }

  /// The python3 on PATH (the one scripts/bootstrap installed moto for).
  static func python() throws -> String {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"
    for folder in path.split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(folder)/python3") {
      return "\(folder)/python3"
    }
    throw TestFailure("python3 is not on PATH; run scripts/bootstrap.")
  }
}
