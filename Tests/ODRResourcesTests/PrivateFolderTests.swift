import Foundation
@testable import ODRBase
@testable import ODRResources
import ODRTesting
import Testing

/// Where odr keeps its locks and state, against a user who prepares them in
/// advance: no `HOME` is not `/tmp`, a planted link or folder is refused,
/// and what odr makes is 0700.
@Suite struct PrivateFolderTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-private-\(UUID().uuidString)")

  static func mode(_ url: URL) throws -> Int {
    try #require(FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int)
  }

  @Test func withoutHOMETheFoldersAreUnderThePasswdHome() throws {
    let home = try #require(XDGFolders.passwdHome())
    for environment in [[:], ["HOME": ""], ["HOME": "relative"]] as [[String: String]] {
      let folders = XDGFolders(environment: environment)
      #expect(folders.stateHome == home.appending(path: ".local/state"))
      #expect(folders.cacheHome == home.appending(path: ".cache"))
      #expect(!folders.stateHome.path.hasPrefix("/tmp"))
    }
    #expect(XDGFolders(environment: ["HOME": "/home/a", "XDG_STATE_HOME": "/s"]).stateHome.path == "/s")
  }

  /// With no home at all, every folder odr would make fails to be made.
  @Test func noHomeIsAPlaceNothingCanBeMade() {
    let error = #expect(throws: SystemError.self) { try PrivateFolder.make(XDGFolders.noHome.appending(path: ".local/state/odr")) }
    #expect(error?.message.contains("set HOME") == true)
  }

  @Test func theFoldersOdrMakesAre0700ParentsIncluded() throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let cache = root.appending(path: "cache")
    _ = try LocalStore(bundle: "com.example.private", cacheHome: cache)
    for folder in [cache, cache.appending(path: "odr"), cache.appending(path: "odr/com.example.private"), cache.appending(path: "odr/com.example.private/locks")] {
      #expect(try Self.mode(folder) == 0o700, "\(folder.path)")
    }
  }

  @Test func aLockThatIsALinkIsRefusedAndNotFollowed() async throws {
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }
    let target = root.appending(path: "elsewhere")
    try FileManager.default.createSymbolicLink(at: root.appending(path: "import.lock"), withDestinationURL: target)
    let error = await #expect(throws: SystemError.self) { try await FileLock(url: root.appending(path: "import.lock")).withExclusive {} }
    #expect(error?.message.contains("is a symbolic link") == true)
    #expect(!FileManager.default.fileExists(atPath: target.path))
  }

  @Test func aFolderThatIsALinkIsRefused() throws {
    try FileManager.default.createDirectory(at: root.appending(path: "real"), withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }
    try FileManager.default.createSymbolicLink(at: root.appending(path: "odr"), withDestinationURL: root.appending(path: "real"))
    let error = #expect(throws: SystemError.self) { try PrivateFolder.make(root.appending(path: "odr")) }
    #expect(error?.message.contains("is a symlink or not a folder") == true)
  }
}

/// What needs root: files that belong to another user (chown). Run by
/// scripts/test's root phase (`ODR_TESTS=root`).
@Suite(.enabled(if: TestSelection.root)) struct PrivateFolderAsRootTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-private-\(UUID().uuidString)")

  /// As root (the case of the finding): a folder or lock file another user
  /// made in advance is refused.
  @Test func anotherUsersFolderOrLockIsRefused() async throws {
    try #require(getuid() == 0, "the root group runs as root (scripts/test)")
    let folder = root.appending(path: "odr"), lock = root.appending(path: "mine/import.lock")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try FileManager.default.createDirectory(at: lock.deletingLastPathComponent(), withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }
    #expect(FileManager.default.createFile(atPath: lock.path, contents: nil))
    #expect(chown(folder.path, 65534, 65534) == 0 && chown(lock.path, 65534, 65534) == 0)
    let folderError = #expect(throws: SystemError.self) { try PrivateFolder.make(folder) }
    #expect(folderError?.message.contains("belongs to another user") == true)
    let lockError = await #expect(throws: SystemError.self) { try await FileLock(url: lock).withExclusive {} }
    #expect(lockError?.message.contains("not a file of this user") == true)
  }
}
