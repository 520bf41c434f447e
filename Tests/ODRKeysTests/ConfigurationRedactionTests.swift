import Foundation
import ODRKit
import ODRTransports
import Testing
import ODRTesting

/// What an app may print or dump — its configuration, a network location
/// with a catalog token and AWS credentials — never shows a secret.
@Suite(.enabled(if: TestSelection.untagged)) struct ConfigurationRedactionTests {
  @Test func printedAndDumpedValuesHideEverySecret() throws {
    let secrets = ["tok-\(UUID().uuidString)", "aws-secret-\(UUID().uuidString)", "aws-session-\(UUID().uuidString)"]
    let environment = ["AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": secrets[1], "AWS_SESSION_TOKEN": secrets[2], "ODR_CATALOG": "s3://bucket/odr"]
    let configuration = try ODRConfiguration.discover(environment: environment, folder: FileManager.default.temporaryDirectory)
    let location = NetworkLocation(url: URL(string: "https://cdn.example/odr/")!,
                                   credential: HTTPCredential(header: "Authorization", value: "Bearer \(secrets[0])", origin: URL(string: "https://cdn.example")!, name: "the token"),
                                   s3: try S3Access.fromEnvironment(environment))
    var texts = [String(describing: configuration), String(reflecting: configuration), String(describing: location), String(reflecting: location)]
    for value in [configuration as Any, location] {
      var dumped = ""
      dump(value, to: &dumped)
      texts.append(dumped)
    }
    for text in texts {
      for secret in secrets { #expect(!text.contains(secret), "\(text)") }
    }
    #expect(texts[0].contains("s3://bucket/odr"))
  }
}
