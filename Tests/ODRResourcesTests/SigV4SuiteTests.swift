import Foundation
import ODRTesting
import ODRTransports
import Testing

/// Every case of the AWS SigV4 signing test suite (awslabs/aws-c-auth,
/// tests/aws-signing-test-suite/v4, Apache-2.0; Tests/Vectors/sigv4):
/// the canonical request, the string to sign, the signature and the
/// Authorization header, byte for byte.
@Suite(.enabled(if: TestSelection.untagged)) struct SigV4SuiteTests {
  /// request.txt as the signer takes it, its payload hash the body's.
  static func request(_ vector: SigV4Vector) throws -> SigV4Signer.Request {
    let request = try vector.request("request.txt")
    return SigV4Signer.Request(method: request.method, path: request.path, query: request.query, headers: request.headers,
                               payloadHash: SigV4Signer.payloadHash(Data(request.body.utf8)))
  }

  @Test func theSuiteHasItsCases() {
    #expect(SigV4Vector.names.count == 38)
  }

  @Test(arguments: SigV4Vector.names) func headerSigningMatchesTheSuite(_ name: String) throws {
    let vector = try SigV4Vector(name)
    let (context, file) = (vector.context, vector.file)
    var signer = SigV4Signer(credentials: AWSCredentials(accessKeyID: context.credentials.access_key_id,
                                                        secretAccessKey: context.credentials.secret_access_key,
                                                        sessionToken: context.credentials.token, source: "test"),
                             region: context.region, service: context.service)
    signer.normalizesPath = context.normalize
    signer.sendsPayloadHash = context.sign_body
    signer.signsSessionToken = !(context.omit_session_token ?? false)
    let date = try Date(context.timestamp, strategy: .iso8601)
    let signed = signer.sign(try Self.request(vector), date: date)
    #expect(signed.canonicalRequest == (try file("header-canonical-request.txt")))
    #expect(signed.stringToSign == (try file("header-string-to-sign.txt")))
    #expect(signed.signature == (try file("header-signature.txt")).trimmingCharacters(in: .whitespacesAndNewlines))
    let expected = try file("header-signed-request.txt").split(separator: "\n").first { $0.hasPrefix("Authorization:") }
    #expect(signed.headers.last.map { "Authorization:\($0.1)" } == expected.map(String.init))
  }
}
