/// The ARN of an AWS KMS key or alias, as an `awskms:` recipient names it:
/// `arn:PARTITION:kms:REGION:ACCOUNT:key/ID` or `…:alias/NAME`. Only an ARN
/// is taken (not a bare key id or alias name): it says the region the key
/// lives in, so the recipient means the same key wherever it is read.
public struct KMSKeyARN: Sendable, Hashable, CustomStringConvertible {
  /// The ARN as given.
  public let description: String
  /// The region of the key (`us-east-1`): where KMS is asked.
  public let region: String
  /// Whether this names an alias rather than a key.
  public let isAlias: Bool

  /// Parses an ARN; nil when `text` is not the ARN of a KMS key or alias.
  public init?(_ text: String) {
    guard text.utf8.count <= 512, text.utf8.allSatisfy({ (33...126).contains($0) }) else { return nil }
    let parts = text.split(separator: ":", maxSplits: 5, omittingEmptySubsequences: false)
    guard parts.count == 6, parts[0] == "arn", parts[2] == "kms",
          !parts[1].isEmpty, parts[1].allSatisfy({ $0.isLowercase || $0 == "-" }),
          Self.isRegion(parts[3]),
          parts[4].count == 12, parts[4].allSatisfy(\.isASCIIDigit) else { return nil }
    let resource = parts[5]
    if resource.hasPrefix("key/") {
      let id = resource.dropFirst(4)
      guard (1...64).contains(id.count), id.allSatisfy({ $0.isASCIIDigit || $0.isLetter || $0 == "-" }) else { return nil }
      isAlias = false
    } else if resource.hasPrefix("alias/") {
      let name = resource.dropFirst(6)
      guard (1...250).contains(name.count), name.allSatisfy({ $0.isASCIIDigit || $0.isLetter || "/_-".contains($0) }) else { return nil }
      isAlias = true
    } else {
      return nil
    }
    description = text
    region = String(parts[3])
  }

  /// Whether `text` has the shape of an AWS region (`us-east-1`,
  /// `eu-central-2`, `us-gov-west-1`: lower-case words and a number,
  /// dash-separated): what may go into an endpoint's host name.
  public static func isRegion(_ text: some StringProtocol) -> Bool {
    let words = text.split(separator: "-", omittingEmptySubsequences: false)
    guard words.count >= 3, words.count <= 5, let last = words.last, !last.isEmpty, last.count <= 2, last.allSatisfy(\.isASCIIDigit) else { return false }
    return words.dropLast().allSatisfy { !$0.isEmpty && $0.count <= 12 && $0.allSatisfy { $0.isASCII && $0.isLowercase } }
  }
}

extension Character {
  fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
