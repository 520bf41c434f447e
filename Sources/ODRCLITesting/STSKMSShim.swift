import Foundation
import NIOCore
import NIOHTTP1
import ODRBase
import ODRHTTP
public import ODRTesting
import ODRTransports
public import Synchronization

/// What moto 5.2 does not check, checked in front of it, so that the KMS
/// tests do not pass on moto's laxity:
///
/// - `AssumeRoleWithWebIdentity`, which AWS serves unsigned and moto (with
///   signature checking on) answers with a 500, and which moto grants any
///   token for any role: the shim checks the token against the one the role
///   admits and refuses others as STS does (403 `AccessDenied`); an
///   admitted call goes on to moto signed by the test's IAM user, and moto
///   makes the role's credentials — whose IAM policies moto does enforce on
///   the KMS calls made with them (a role without `kms:Decrypt` is refused
///   by moto, not here).
/// - A disabled key, whose state moto ignores: `Encrypt` and `Decrypt` with
///   a key named in ``disabled`` are answered `DisabledException` (400), as
///   KMS answers.
///
/// Everything else goes to moto as it came, its `Host` header too, so the
/// client's own signature is what moto checks. What the shim saw and the
/// credentials STS issued are kept, for the tests to search output and
/// disk for them.
public final class STSKMSShim: Sendable {
  /// One request the shim saw.
  public struct Seen: Sendable {
    /// `AssumeRoleWithWebIdentity`, `TrentService.Decrypt`, … (the form's
    /// Action or the KMS target).
    public let action: String
    /// The `Authorization` header, if any.
    public let authorization: String?
  }

  public let moto: MotoServer
  /// The token each role admits (role ARN → token).
  public let admitted: Mutex<[String: String]>
  /// KMS key ARNs answered as disabled.
  public let disabled = Mutex<Set<String>>([])
  public let seen = Mutex<[Seen]>([])
  /// The access key ids, secret keys and session tokens STS issued.
  public let issued = Mutex<[String]>([])
  private let client = HTTP1Client()

  public init(moto: MotoServer, admitted: [String: String]) {
    self.moto = moto
    self.admitted = Mutex(admitted)
  }

  /// Runs `test` with the shim serving on 127.0.0.1.
  public func serving<T>(_ test: (TestHTTPServer) async throws -> T) async throws -> T {
    defer { Task { [client] in await client.shutdown() } }
    return try await TestHTTPServer.answeringAsync({ request in await self.answer(request) }, test)
  }

  private func answer(_ request: TestHTTPServer.Request) async -> TestHTTPServer.Reply {
    let form = Self.form(request.body)
    let target = request.headers["x-amz-target"] ?? ""
    seen.withLock { $0.append(Seen(action: form["Action"] ?? target, authorization: request.headers["authorization"])) }
    if form["Action"] == "AssumeRoleWithWebIdentity" {
      return await assumeRole(request, form: form)
    }
    if target.hasPrefix("TrentService."), let key = Self.keyID(request.body), disabled.withLock({ $0.contains(key) }) {
      let body = #"{"__type":"DisabledException","message":"\#(key) is disabled."}"#
      return TestHTTPServer.Reply(status: 400, headers: ["Content-Type": "application/x-amz-json-1.1"], body: Data(body.utf8))
    }
    return await forward(request, headers: request.headers.map { ($0.key, $0.value) })
  }

  /// Checks the token and role, then lets moto make the credentials.
  private func assumeRole(_ request: TestHTTPServer.Request, form: [String: String]) async -> TestHTTPServer.Reply {
    let role = form["RoleArn"] ?? ""
    guard let token = form["WebIdentityToken"], admitted.withLock({ $0[role] }) == token else {
      let body = """
        <ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>AccessDenied</Code>\
        <Message>Not authorized to perform sts:AssumeRoleWithWebIdentity</Message></Error><RequestId>shim</RequestId></ErrorResponse>
        """
      return TestHTTPServer.Reply(status: 403, headers: ["Content-Type": "text/xml"], body: Data(body.utf8))
    }
    let host = request.headers["host"] ?? ""
    let credentials = AWSCredentials(accessKeyID: moto.user.accessKeyId, secretAccessKey: moto.user.secretAccessKey, source: "the test's IAM user")
    let signed = SigV4Signer(credentials: credentials, region: "us-east-1", service: "sts").sign(
      method: "POST", url: URL(string: "http://\(host)/")!,
      headers: [("Content-Type", request.headers["content-type"] ?? "application/x-www-form-urlencoded"), ("Host", host)],
      payloadHash: SigV4Signer.payloadHash(request.body), date: Date())
    let reply = await forward(request, headers: signed)
    let text = String(decoding: reply.body, as: UTF8.self)
    let secrets = ["AccessKeyId", "SecretAccessKey", "SessionToken"].compactMap { XMLText.element($0, in: text) }
    issued.withLock { $0 += secrets }
    return reply
  }

  private func forward(_ request: TestHTTPServer.Request, headers: [(String, String)]) async -> TestHTTPServer.Reply {
    let outgoing = HTTP1Request(method: HTTPMethod(rawValue: request.method), scheme: "http", host: "127.0.0.1", port: moto.endpoint.port ?? 80,
                                target: request.target, headers: HTTPHeaders(headers.filter { $0.0.lowercased() != "content-length" }),
                                body: request.body.isEmpty ? nil : .bytes(ByteBuffer(bytes: request.body)))
    do {
      let response = try await client.execute(outgoing)
      let body = try await response.body.collect(upTo: 1 << 20)
      return TestHTTPServer.Reply(status: Int(response.status.code), headers: ["Content-Type": response.headers.first(name: "content-type") ?? "text/plain"],
                                  body: Data(body.readableBytesView))
    } catch {
      return .text("the shim could not reach moto: \(error)", status: 502)
    }
  }

  /// A form body's fields, decoded.
  private static func form(_ body: Data) -> [String: String] {
    var fields: [String: String] = [:]
    for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
      let parts = pair.split(separator: "=", maxSplits: 1).map { $0.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
      if parts.count == 2 { fields[parts[0]] = parts[1] }
    }
    return fields
  }

  /// `KeyId` of a KMS request's JSON body.
  private static func keyID(_ body: Data) -> String? {
    // not JSON: no key named
    (dropping(.isTheAnswer) { try JSONSerialization.jsonObject(with: body) } as? [String: Any])?["KeyId"] as? String
  }
}
