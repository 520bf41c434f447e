import Foundation
import ODRTesting
@testable import ODRTransports
import Testing

/// AWS Signature V4 against the examples AWS publishes in the S3 API
/// reference ("Signature Calculations for the Authorization Header":
/// access key AKIAIOSFODNN7EXAMPLE, 24 May 2013, us-east-1). moto checks
/// signatures but not the region or the clock: those are covered here.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(1))) struct SigV4SignerTests {
  let signer = SigV4Signer(credentials: AWSCredentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE",
                                                      secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", source: "test"),
                           region: "us-east-1")
  let date = Date(timeIntervalSince1970: 1_369_353_600)  // 2013-05-24T00:00:00Z

  func authorization(_ headers: [(String, String)]) -> String? {
    headers.first { $0.0 == "Authorization" }?.1
  }

  @Test func getObjectWithARange() {
    let headers = signer.sign(method: "GET", url: URL(string: "https://examplebucket.s3.amazonaws.com/test.txt")!,
                              headers: [("Range", "bytes=0-9")], payloadHash: SigV4Signer.emptyPayloadHash, date: date)
    #expect(authorization(headers) == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    #expect(headers.contains { $0 == ("x-amz-date", "20130524T000000Z") })
  }

  @Test func putObjectWithAKeyThatNeedsEncoding() {
    let headers = signer.sign(method: "PUT", url: URL(string: "https://examplebucket.s3.amazonaws.com/test%24file.text")!,
                              headers: [("Date", "Fri, 24 May 2013 00:00:00 GMT"), ("x-amz-storage-class", "REDUCED_REDUNDANCY")],
                              payloadHash: "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072", date: date)
    #expect(authorization(headers)?.hasSuffix("SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd") == true)
  }

  @Test func getBucketLifecycleAndListObjectsSignTheirQueries() {
    let lifecycle = signer.sign(method: "GET", url: URL(string: "https://examplebucket.s3.amazonaws.com/?lifecycle")!,
                                headers: [], payloadHash: SigV4Signer.emptyPayloadHash, date: date)
    #expect(authorization(lifecycle)?.hasSuffix("Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543") == true)
    let list = signer.sign(method: "GET", url: URL(string: "https://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J")!,
                           headers: [], payloadHash: SigV4Signer.emptyPayloadHash, date: date)
    #expect(authorization(list)?.hasSuffix("Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7") == true)
  }

  @Test func theRegionAndTheDayAreInTheScopeAndTheSignature() {
    let url = URL(string: "https://examplebucket.s3.amazonaws.com/test.txt")!
    let frankfurt = SigV4Signer(credentials: signer.credentials, region: "eu-central-1")
    let here = authorization(signer.sign(method: "GET", url: url, headers: [], payloadHash: SigV4Signer.emptyPayloadHash, date: date))
    let there = authorization(frankfurt.sign(method: "GET", url: url, headers: [], payloadHash: SigV4Signer.emptyPayloadHash, date: date))
    #expect(there?.contains("/20130524/eu-central-1/s3/aws4_request") == true)
    #expect(here?.suffix(64) != there?.suffix(64))
    // One second before midnight UTC is still the 23rd, whatever the local zone.
    let late = signer.sign(method: "GET", url: url, headers: [], payloadHash: SigV4Signer.emptyPayloadHash, date: date - 1)
    #expect(late.contains { $0 == ("x-amz-date", "20130523T235959Z") })
    #expect(authorization(late)?.contains("/20130523/us-east-1/") == true)
  }

  @Test func temporaryCredentialsSignTheirSessionToken() {
    let temporary = SigV4Signer(credentials: AWSCredentials(accessKeyID: "ASIAEXAMPLE", secretAccessKey: "s", sessionToken: "token/+=", source: "test"),
                                region: "us-east-1")
    let headers = temporary.sign(method: "GET", url: URL(string: "http://127.0.0.1:9000/bucket/key")!, headers: [],
                                 payloadHash: SigV4Signer.emptyPayloadHash, date: date)
    #expect(headers.contains { $0 == ("x-amz-security-token", "token/+=") })
    #expect(headers.contains { $0 == ("host", "127.0.0.1:9000") })
    #expect(authorization(headers)?.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,") == true)
  }

  /// The reviewer's findings: an encoded `&` stays in its value, pairs sort
  /// by name then value, an IPv6 host keeps its brackets, tabs collapse.
  @Test func queriesHostsAndHeadersAreCanonicalAsAWSDefinesThem() {
    let request = { (query: String) in
      SigV4Signer.Request(method: "GET", path: "/", query: query, headers: [("Host", "h")], payloadHash: SigV4Signer.emptyPayloadHash)
    }
    #expect(signer.sign(request("prefix=a%26b"), date: date).canonicalRequest.split(separator: "\n")[2] == "prefix=a%26b")
    #expect(signer.sign(request("a=2&a-b=1&a=10"), date: date).canonicalRequest.split(separator: "\n")[2] == "a=10&a=2&a-b=1")
    let v6 = signer.sign(method: "GET", url: URL(string: "http://[::1]:9000/bucket/key")!, headers: [("X-Tab", "a\t\tb  c")],
                         payloadHash: SigV4Signer.emptyPayloadHash, date: date)
    #expect(v6.contains { $0 == ("host", "[::1]:9000") })
    let canonical = signer.sign(SigV4Signer.Request(method: "GET", path: "/", query: "", headers: [("Host", "[::1]:9000"), ("X-Tab", "a\t\tb  c")],
                                                    payloadHash: SigV4Signer.emptyPayloadHash), date: date).canonicalRequest
    #expect(canonical.contains("\nhost:[::1]:9000\n") && canonical.contains("\nx-tab:a b c\n"))
  }

  @Test func credentialsComeFromTheVariablesElseTheProfile() throws {
    let file = FileManager.default.temporaryDirectory.appending(path: "odr-aws-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: file) }
    try "[default]\naws_access_key_id=AKIADEFAULT\naws_secret_access_key = d\n\n[ci]\n  aws_access_key_id = AKIACI\naws_secret_access_key=c\naws_session_token = t\n"
      .write(to: file, atomically: true, encoding: .utf8)
    let variables = AWSCredentials.find(in: ["AWS_ACCESS_KEY_ID": "AKIAENV", "AWS_SECRET_ACCESS_KEY": "e", "AWS_SHARED_CREDENTIALS_FILE": file.path])
    #expect(variables?.accessKeyID == "AKIAENV" && variables?.sessionToken == nil)
    #expect(AWSCredentials.find(in: ["AWS_SHARED_CREDENTIALS_FILE": file.path])?.accessKeyID == "AKIADEFAULT")
    let ci = AWSCredentials.find(in: ["AWS_SHARED_CREDENTIALS_FILE": file.path, "AWS_PROFILE": "ci"])
    #expect(ci?.accessKeyID == "AKIACI" && ci?.secretAccessKey == "c" && ci?.sessionToken == "t")
    #expect(ci?.source == "profile 'ci' of \(file.path)")
    #expect(AWSCredentials.find(in: ["AWS_SHARED_CREDENTIALS_FILE": file.path, "AWS_PROFILE": "missing"]) == nil)
    #expect(AWSCredentials.region(in: ["AWS_DEFAULT_REGION": "eu-west-1"]) == "eu-west-1")
    #expect(AWSCredentials.region(in: ["AWS_REGION": "ap-south-1", "AWS_DEFAULT_REGION": "eu-west-1"]) == "ap-south-1")
  }

  @Test func s3URLsMapToPathStyleOnAnEndpointAndVirtualHostsOnAWS() throws {
    let object = URL(string: "s3://odr-bucket/apps/demo/catalog.json")!
    let compatible = try S3Access.fromEnvironment(["AWS_ENDPOINT_URL": "http://127.0.0.1:9000/"])
    #expect(compatible.httpURL(for: object).absoluteString == "http://127.0.0.1:9000/odr-bucket/apps/demo/catalog.json")
    let aws = try S3Access.fromEnvironment(["AWS_REGION": "eu-west-1"])
    #expect(aws.httpURL(for: object).absoluteString == "https://odr-bucket.s3.eu-west-1.amazonaws.com/apps/demo/catalog.json")
    #expect(throws: (any Error).self) { try S3Access.fromEnvironment(["AWS_ENDPOINT_URL": "ftp://x"]) }
  }
}
