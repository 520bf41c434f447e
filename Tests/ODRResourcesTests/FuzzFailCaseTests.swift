import Foundation
import ODRFuzzEntries
import Testing
import ODRTesting

/// Every input a fuzzer ever crashed on (FuzzTesting/FailCases/<target>/,
/// kept by `scripts/checks/fuzz`), and the seeds, replayed through the same entry
/// the fuzz target feeds: CI needs no sanitizer build to keep them fixed.
@Suite(.enabled(if: TestSelection.untagged)) struct FuzzFailCaseTests {
  static let folder = Paths.packageRoot.appending(path: "FuzzTesting")
  static let targets: [String: FuzzEntry] = [
    "FuzzJSONReader": .jsonReader, "FuzzCatalog": .catalog, "FuzzSignatureLines": .signatureLines,
    "FuzzHandover": .handover, "FuzzDocuments": .documents, "FuzzAgeFile": .ageFile,
    "FuzzSSHKeys": .sshKeys, "FuzzRecipientsFile": .recipientsFile, "FuzzDotenv": .dotenv, "FuzzTemplate": .template,
    "FuzzProxyRequest": .proxyRequest, "FuzzS3Listing": .s3Listing, "FuzzAWSAnswer": .awsAnswer,
  ]

  @Test func everyTargetHasAnEntryAndSeeds() throws {
    let main = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).filter { $0.hasPrefix("Fuzz") && $0 != "FuzzDriver" }
    #expect(Set(main) == Set(Self.targets.keys))
    #expect(Set(Self.targets.values) == Set(FuzzEntry.allCases))
    for target in main {
      #expect(!(try FileManager.default.contentsOfDirectory(atPath: Self.folder.appending(path: "Seeds/\(target)").path)).isEmpty, "\(target)")
    }
  }

  /// Every kept crasher, then every seed (at least one per target, so the
  /// replay itself is exercised even while no crasher is kept).
  @Test func replaysEveryKeptCrasherAndSeed() throws {
    var seeds = 0
    for kind in ["FailCases", "Seeds"] {
      for (target, entry) in Self.targets {
        let cases = Self.folder.appending(path: "\(kind)/\(target)")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: cases.path)) ?? [] where !name.hasPrefix(".") {  // no folder: no case yet
          entry.run(Array(try Data(contentsOf: cases.appending(path: name))))
          if kind == "Seeds" { seeds += 1 }
        }
      }
    }
    #expect(seeds >= Self.targets.count)
  }
}
