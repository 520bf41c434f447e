import ODRBase
import Foundation
@testable import ODRCatalog
import ODRTesting
import SystemPackage
import Testing

/// File errors keep their cause: the `Errno` is the error's `underlying`,
/// and the message still says what to do.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(1))) struct FileIOErrorTests {
  @Test func aFullDiskIsOutOfSpaceWithItsErrno() throws {
    let fd = open("/dev/full", O_WRONLY | O_CLOEXEC)
    try #require(fd >= 0)
    defer { close(fd) }
    let bytes = [UInt8](repeating: 7, count: 4096)
    let error = #expect(throws: ResourceError.self) {
      try bytes.withUnsafeBytes { try FileIO.writeAll(fd, $0, path: "/dev/full") }
    }
    #expect(error?.code == .outOfSpace)
    #expect(error?.underlying as? Errno == .noSpace)
    #expect(error?.message.contains("the disk is full") == true)
  }

  @Test func readingAFolderIsAnIOErrorWithItsErrno() throws {
    let error = #expect(throws: ResourceError.self) {
      try FileIO.readChunks(of: URL(filePath: NSTemporaryDirectory())) { _ in }
    }
    #expect(error?.code == .io)
    #expect(error?.underlying as? Errno == .isDirectory)
  }

  /// A Foundation file error gives the errno it carries, not the global
  /// `errno` (which later calls overwrite).
  @Test func aFoundationErrorKeepsItsOwnErrno() throws {
    errno = ENOSPC  // what a stale read would find
    do {
      _ = try Data(contentsOf: URL(filePath: "/etc/hostname/not-a-folder"))
      Issue.record("read through a file")
    } catch {
      let failure = FileIO.error("Cannot read", error)
      #expect(failure.underlying as? Errno == .notDirectory)
      #expect(failure.code == .io)
    }
  }
}
