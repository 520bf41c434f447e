import Crypto
public import FoundationEssentials
import ODRBase
import ODRCatalog

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

  /// What is recorded for the odr.json at `path` whose content is `bytes`.
  public enum Status: Sendable, Equatable {
    case adopted
    /// Adopted once, with other content: it changed since.
    case changed
    case never
  }

  /// Whether `path` is adopted with exactly this content (one read of the record).
  public func status(of path: String, bytes: [UInt8]) throws -> Status {
    guard let digest = try file.read()?.files[path] else { return .never }
    return digest == Self.digest(bytes) ? .adopted : .changed
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
