import Crypto
import Foundation
import ODRTesting
import SwiftASN1
import X509

/// The bound API of the proxy tests: a real nginx serving https on
/// 127.0.0.1 with a certificate of a test CA, which odr trusts through
/// `SSL_CERT_FILE` (the system's certificates and the test CA) as a user's
/// corporate CA would be trusted. It answers whether the key arrived where
/// it belongs, echoes the Authorization header back, and serves a git
/// repository (dumb http) to holders of the key.
struct TestUpstream: Sendable {
  let nginx: Nginx
  let root: URL
  /// The system's certificates followed by the test CA's.
  let trust: URL
  let weather: String
  let maps: String
  /// A token for Basic authentication (user x-access-token), as git sends one.
  let github: String
  /// An OpenAI-shaped key (its chat completions) and a Slack bot token (auth.test).
  let openai: String
  let slack: String

  var port: Int { nginx.port }
  var origin: String { "https://127.0.0.1:\(nginx.port)" }

  /// The two bare repositories every upstream serves (one commit, served as
  /// dumb http), made once by git for the process and copied for each.
  static let repositories = Task { () throws -> URL in
    let folder = FileManager.default.temporaryDirectory.appending(path: "odr-upstream-git-\(getpid())")
    let repository = folder.appending(path: "repo.git")
    for arguments in [["init", "-q", "--bare", "-b", "main", repository.path],
                      ["-C", folder.path, "clone", "-q", repository.path, "work"],
                      ["-C", folder.appending(path: "work").path, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "hello through the proxy"],
                      ["-C", folder.appending(path: "work").path, "push", "-q", "origin", "HEAD:main"],
                      ["-C", repository.path, "update-server-info"],
                      ["clone", "-q", "--bare", repository.path, folder.appending(path: "basic.git").path],
                      ["-C", folder.appending(path: "basic.git").path, "update-server-info"]] {
      let git = try await Command.run("/usr/bin/git", arguments)
      guard git.status == 0 else { throw TestFailure("git \(arguments.joined(separator: " ")): \(git.stderr)") }
    }
    return folder
  }

  static func start(root: URL, weather: String, maps: String, github: String = "gh-\(UUID().uuidString)",
                    openai: String = "sk-proj-" + String(repeating: UUID().uuidString.filter(\.isLetter), count: 4).prefix(48),
                    slack: String = "xoxb-1234567890-1234567890123-" + UUID().uuidString.filter(\.isLetter).prefix(8) + "AbCdEfGhIjKlMnOp") async throws -> TestUpstream {
    let (caPEM, leafPEM, keyPEM) = try certificates()
    let files = root.appending(path: "upstream")
    try FileManager.default.createDirectory(at: files.appending(path: "www"), withIntermediateDirectories: true)
    try Data(leafPEM.utf8).write(to: files.appending(path: "server.pem"))
    try Data(keyPEM.utf8).write(to: files.appending(path: "server.key"))
    let system = (try? String(contentsOfFile: "/etc/ssl/certs/ca-certificates.crt", encoding: .utf8)) ?? ""  // none: the test CA alone
    try Data((system + "\n" + caPEM).utf8).write(to: files.appending(path: "trust.pem"))
    for name in ["repo.git", "basic.git"] {
      try FileManager.default.copyItem(at: try await Self.repositories.value.appending(path: name), to: files.appending(path: "www/\(name)"))
    }
    let basic = "Basic " + Data("x-access-token:\(github)".utf8).base64EncodedString()
    let locations = """
      location = /header { if ($http_authorization = "Bearer \(weather)") { return 200 "header reached\\n"; } return 401 "no key in the header\\n"; }
      location = /query { if ($arg_key = "\(maps)") { return 200 "query reached\\n"; } return 401 "no key in the query\\n"; }
      location = /echo { return 200 "you sent $http_authorization\\n"; }
      location = /slow.txt { limit_rate 8k; }
      location = /gzip { add_header Content-Encoding gzip always; return 200 "not really gzip"; }
      location /repo.git/ { if ($http_authorization != "Bearer \(weather)") { return 401; } }
      location /basic.git/ { if ($http_authorization != "\(basic)") { add_header WWW-Authenticate 'Basic realm="git"' always; return 401; } }
      location = /basic { if ($http_authorization = "\(basic)") { return 200 "basic reached\\n"; } return 401 "no basic\\n"; }
      location = /v1/chat/completions {
        default_type application/json;
        if ($http_authorization = "Bearer \(openai)") { return 200 '{"id": "c1", "object": "chat.completion", "created": 1, "model": "m", "choices": [{"index": 0, "message": {"role": "assistant", "content": "noted"}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}'; }
        return 401 '{"error": {"message": "bad key", "type": "invalid_request_error"}}';
      }
      location = /api/auth.test {
        default_type application/json;
        if ($http_authorization = "Bearer \(slack)") { return 200 '{"ok": true, "url": "https://t.slack.com/", "team": "t", "user": "bot", "team_id": "T1", "user_id": "U1", "bot_id": "B1"}'; }
        return 200 '{"ok": false, "error": "invalid_auth"}';
      }
      """
    let nginx = try await Nginx.start(root: files.appending(path: "www"), locations: locations,
                                      tls: (files.appending(path: "server.pem"), files.appending(path: "server.key")))
    return TestUpstream(nginx: nginx, root: files, trust: files.appending(path: "trust.pem"), weather: weather, maps: maps, github: github, openai: openai, slack: slack)
  }

  /// A test CA and a leaf for 127.0.0.1 (and `names`) it signed, PEM (the leaf's key too).
  static func certificates(names: [String] = []) throws -> (ca: String, leaf: String, key: String) {
    let caKey = P256.Signing.PrivateKey()
    let caName = try DistinguishedName { CommonName("odr proxy tests CA") }
    let now = Date()
    let ca = try Certificate(version: .v3, serialNumber: .init(), publicKey: .init(caKey.publicKey), notValidBefore: now - 3600,
                             notValidAfter: now + 86400, issuer: caName, subject: caName, signatureAlgorithm: .ecdsaWithSHA256,
                             extensions: try Certificate.Extensions {
                               Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                               Critical(KeyUsage(keyCertSign: true))
                               SubjectKeyIdentifier(hash: .init(caKey.publicKey))
                             }, issuerPrivateKey: .init(caKey))
    let leafKey = P256.Signing.PrivateKey()
    let leaf = try Certificate(version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey), notValidBefore: now - 3600,
                               notValidAfter: now + 86400, issuer: caName, subject: try DistinguishedName { OrganizationName("upstream") },
                               signatureAlgorithm: .ecdsaWithSHA256,
                               extensions: try Certificate.Extensions {
                                 SubjectAlternativeNames([.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))] + names.map { .dnsName($0) })
                                 try ExtendedKeyUsage([.serverAuth])
                                 AuthorityKeyIdentifier(keyIdentifier: try ca.extensions.subjectKeyIdentifier?.keyIdentifier)
                               }, issuerPrivateKey: .init(caKey))
    return (try ca.serializeAsPEM().pemString, try leaf.serializeAsPEM().pemString, leafKey.pemRepresentation)
  }

  func stop() { nginx.stop() }
}
