import Crypto
import ODRBase
public import Foundation

/// A file's SHA-256, as lowercase hex: what a test checks a blob against,
/// computed here (swift-crypto) rather than by starting `sha256sum`.
public enum FileDigest {
  /// The SHA-256 of the file at `url`, read in 1 MiB pieces.
  public static func sha256(of url: URL) throws -> String {
    let handle = try FileHandle(forReadingFrom: url)
    defer { dropping(.cleanup) { try handle.close() } }
    var hasher = SHA256()
    while let piece = try handle.read(upToCount: 1 << 20), !piece.isEmpty { hasher.update(data: piece) }
    return hasher.finalize().map { String(format: "%02x", $0) }.joined()
  }
}
