import Crypto
import Foundation
import ODRTesting
import ODRTransports
import Testing

/// Every case of the AWS SigV4 signing test suite (awslabs/aws-c-auth,
/// tests/aws-signing-test-suite/v4, Apache-2.0; Tests/Vectors/sigv4):
/// the canonical request, the string to sign, the signature and the
/// Authorization header, byte for byte.
@Suite(.enabled(if: TestSelection.untagged)) struct SigV4SuiteTests {
  static let folder = Paths.packageRoot.appending(path: "Tests/Vectors/sigv4")

  static let cases: [String] = (try? FileManager.default.contentsOfDirectory(atPath: folder.path))?
    .filter { FileManager.default.fileExists(atPath: folder.appending(path: "\($0)/context.json").path) }.sorted() ?? []

  struct Context: Decodable {
    struct Credentials: Decodable {
      var access_key_id: String
      var secret_access_key: String
      var token: String?
    }
    var credentials: Credentials
    var region: String
    var service: String
    var timestamp: String
    var normalize: Bool
    var sign_body: Bool
    var omit_session_token: Bool?
  }

  /// Reads request.txt: the request line, headers (a line starting with
  /// white space continues the previous one), a blank line, the body.
  static func request(_ text: String) throws -> SigV4Signer.Request {
    let (head, body) = text.range(of: "\n\n").map { (String(text[..<$0.lowerBound]), String(text[$0.upperBound...])) } ?? (text, "")
    var lines = head.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let requestLine = lines.removeFirst()
    let method = try #require(requestLine.split(separator: " ").first)
    let target = requestLine.dropFirst(method.count + 1).dropLast(" HTTP/1.1".count)
    let (path, query) = target.firstIndex(of: "?").map { (String(target[..<$0]), String(target[target.index(after: $0)...])) } ?? (String(target), "")
    var headers: [(String, String)] = []
    for line in lines where !line.isEmpty {
      if line.first == " " || line.first == "\t", !headers.isEmpty {
        headers[headers.count - 1].1 += "\n" + line
      } else {
        let colon = try #require(line.firstIndex(of: ":"))
        headers.append((String(line[..<colon]), String(line[line.index(after: colon)...])))
      }
    }
    let hash = SHA256.hash(data: Data(body.utf8)).map { String(format: "%02x", $0) }.joined()
    return SigV4Signer.Request(method: String(method), path: path, query: query, headers: headers, payloadHash: hash)
  }

  @Test func theSuiteHasItsCases() {
    #expect(Self.cases.count == 38)
  }

  @Test(arguments: cases) func headerSigningMatchesTheSuite(_ name: String) throws {
    let folder = Self.folder.appending(path: name)
    func file(_ name: String) throws -> String { try String(contentsOf: folder.appending(path: name), encoding: .utf8) }
    let context = try JSONDecoder().decode(Context.self, from: Data(contentsOf: folder.appending(path: "context.json")))
    var signer = SigV4Signer(credentials: AWSCredentials(accessKeyID: context.credentials.access_key_id,
                                                        secretAccessKey: context.credentials.secret_access_key,
                                                        sessionToken: context.credentials.token, source: "test"),
                             region: context.region, service: context.service)
    signer.normalizesPath = context.normalize
    signer.sendsPayloadHash = context.sign_body
    signer.signsSessionToken = !(context.omit_session_token ?? false)
    let date = try Date(context.timestamp, strategy: .iso8601)
    let signed = signer.sign(try Self.request(try file("request.txt")), date: date)
    #expect(signed.canonicalRequest == (try file("header-canonical-request.txt")))
    #expect(signed.stringToSign == (try file("header-string-to-sign.txt")))
    #expect(signed.signature == (try file("header-signature.txt")).trimmingCharacters(in: .whitespacesAndNewlines))
    let expected = try file("header-signed-request.txt").split(separator: "\n").first { $0.hasPrefix("Authorization:") }
    #expect(signed.headers.last.map { "Authorization:\($0.1)" } == expected.map(String.init))
  }
}
