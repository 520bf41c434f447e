public import Foundation
import ODRBase

/// A real `moto_server` (PyPI's `moto[server]`) on 127.0.0.1 with signature
/// checking on: its first six actions are unauthenticated
/// (`INITIAL_NO_AUTH_ACTION_COUNT`) and set up, through its IAM API, a
/// private bucket, a user allowed to use it, and a role that user may
/// assume (resources/fixtures/moto-setup.py). Every later request must be
/// signed by those credentials.
public final class MotoServer: @unchecked Sendable {
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

  public let endpoint: URL
  public let bucket: String
  /// The IAM user's long-term access key.
  public let user: Credentials
  /// Temporary credentials (with a session token) of the assumed role.
  public let session: Credentials
  private let process: Daemon
  private let log: URL

  public init(bucket: String = "odr-private") throws {
    let python = try Self.python()
    let port = try Nginx.freePort()
    endpoint = URL(string: "http://127.0.0.1:\(port)")!
    self.bucket = bucket
    log = FileManager.default.temporaryDirectory.appending(path: "odr-moto-\(UUID().uuidString).log")
    var environment = ProcessInfo.processInfo.environment
    environment["INITIAL_NO_AUTH_ACTION_COUNT"] = "6"
    for name in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"] { environment[name] = nil }
    process = try Daemon(python, ["-m", "moto.server", "-H", "127.0.0.1", "-p", "\(port)"], environment: environment, log: log)
    for _ in 0..<1500 where !Nginx.accepts(port) {
      guard process.isRunning else { break }
      usleep(10_000)
    }
    guard Nginx.accepts(port) else {
      process.stop()
      // the log, if any, explains the failure being thrown
      let text = dropping(.messageOnly) { [log] in try String(contentsOf: log, encoding: .utf8) } ?? ""
      throw TestFailure("moto_server did not start: \(text.suffix(400)). Run scripts/bootstrap.")
    }
    let setup = try Command.runBlocking(python, [Paths.packageRoot.appending(path: "resources/fixtures/moto-setup.py").path, endpoint.absoluteString, bucket])
    guard setup.status == 0, let data = setup.stdout.data(using: .utf8),
          // not the expected JSON: the error below says so
          let parsed = dropping(.isTheAnswer, { try JSONDecoder().decode([String: Credentials].self, from: data) }),
          let user = parsed["user"], let session = parsed["session"] else {
      process.stop()
      throw TestFailure("moto set-up failed: \(setup.stderr.suffix(600))")
    }
    self.user = user
    self.session = session
  }

  /// `init`, waiting on a thread of its own rather than on the cooperative pool.
  public static func start(bucket: String = "odr-private") async throws -> MotoServer {
    try await Command.offPool { try MotoServer(bucket: bucket) }
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
  /// (`s3` is a client); what it prints.
  public func boto(_ code: String) async throws -> Command.Result {
    let prelude = """
      import boto3
      s3 = boto3.client("s3", endpoint_url="\(endpoint.absoluteString)", region_name="us-east-1",
                        aws_access_key_id="\(user.accessKeyId)", aws_secret_access_key="\(user.secretAccessKey)")

      """
    return try await Command.run(try Self.python(), ["-c", prelude + code])
  }

  public func stop() {
    process.stop()
    // clean-up of a temporary file
    dropping(.cleanup) { try FileManager.default.removeItem(at: log) }
  }

  deinit { stop() }

  /// The python3 on PATH (the one scripts/bootstrap installed moto for).
  static func python() throws -> String {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"
    for folder in path.split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(folder)/python3") {
      return "\(folder)/python3"
    }
    throw TestFailure("python3 is not on PATH; run scripts/bootstrap.")
  }
}
