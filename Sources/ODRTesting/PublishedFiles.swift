public import Foundation
import ODRBase

/// What a test reads back from disk: a published catalog's blob, and the
/// files that hold a secret they must not.
public enum PublishedFiles {
  /// The blob of `tag`'s first file in the catalog folder `published`.
  public static func blob(of tag: String, in published: URL) throws -> URL {
    let catalog = try JSONSerialization.jsonObject(with: Data(contentsOf: published.appending(path: "catalog.json"))) as? [String: Any]
    let tags = catalog?["tags"] as? [String: [String: Any]]
    let sha = ((tags?[tag]?["files"] as? [[String: Any]])?.first?["sha256"] as? String) ?? ""
    return published.appending(path: "blobs/\(sha)")
  }

  /// The files under `folder` whose bytes contain any of `needles`.
  public static func containing(_ needles: [String], under folder: URL) -> [String] {
    let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
    var found: [String] = []
    while let url = enumerator?.nextObject() as? URL {
      // a folder or an unreadable file holds nothing to find
      guard let data = dropping(.isTheAnswer, { try Data(contentsOf: url) }) else { continue }
      if needles.contains(where: { data.range(of: Data($0.utf8)) != nil }) { found.append(url.path) }
    }
    return found
  }
}
