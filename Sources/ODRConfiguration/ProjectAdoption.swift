public import FoundationEssentials
import Crypto
import ODRBase
import ODRResources

/// The odr.json files the user adopted (`odr trust adopt`), each by its
/// path and the SHA-256 of its content, in `<state>/odr/_adopted.json`:
/// until a file is adopted — and after any change to it, as direnv's
/// `allow` — its `catalog`, `trust`, `auth` and `endpoint` are inert, so a
/// cloned repository cannot choose what odr trusts, where it sends a
/// catalog token, or where requests signed with the user's AWS credentials
/// go (docs/trust.md, "A repository's odr.json").
public struct ProjectAdoption: Sendable {
  struct Record: Codable, Equatable {
    var format = 1
    /// SHA-256 (hex) of each adopted file's content, by its absolute path.
    var files: [String: String] = [:]
  }

  let file: StateFile<Record>

  public init(stateHome: URL) {
    file = StateFile(url: stateHome.appending(path: "odr").appending(path: "_adopted.json"),
                     what: "the odr.json files adopted on this machine", reset: "remove it and run `odr trust adopt` again where you trust odr.json")
  }

  /// SHA-256 (hex) of an odr.json's bytes.
  public static func digest(_ bytes: [UInt8]) -> String {
    SHA256.hash(data: bytes).map { String($0 >> 4, radix: 16) + String($0 & 0x0f, radix: 16) }.joined()
  }

  /// Whether `path` is adopted with exactly this content.
  public func isAdopted(_ path: String, bytes: [UInt8]) throws -> Bool {
    try file.read()?.files[path] == Self.digest(bytes)
  }

  /// Whether `path` was adopted in some form (it changed since, if not now).
  public func wasAdopted(_ path: String) throws -> Bool {
    try file.read()?.files[path] != nil
  }

  /// Adopts `path` as it is now (its content's digest).
  public func adopt(_ path: String, bytes: [UInt8]) async throws {
    let digest = Self.digest(bytes)
    try await file.update { record in
      record = record ?? Record()
      record!.files[path] = digest
    }
  }

  /// Forgets `path`; true when it was adopted.
  public func revoke(_ path: String) async throws -> Bool {
    try await file.update { record in
      record?.files.removeValue(forKey: path) != nil
    }
  }
}
