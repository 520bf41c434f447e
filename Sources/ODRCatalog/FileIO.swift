package import FoundationEssentials
import Crypto
import ODRBase
package import SystemPackage
#if canImport(Glibc)
package import Glibc
#endif

/// Small POSIX file operations with errors that name the path.
package enum FileIO {
  package enum Kind { case file, directory, missing, other }

  /// What is at `url`, without following a final symlink.
  package static func kind(of url: URL) -> Kind {
    var info = stat()
    guard lstat(url.path, &info) == 0 else { return .missing }
    switch info.st_mode & S_IFMT {
    case S_IFREG: return .file
    case S_IFDIR: return .directory
    default: return .other
    }
  }

  package static func size(of url: URL) -> Int64? {
    var info = stat()
    guard lstat(url.path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
    return Int64(info.st_size)
  }

  /// Refuses a symlink at any component of `path` below `root`.
  package static func refuseSymlinks(along path: String, under root: URL, tag: String) throws {
    var current = root
    for component in path.split(separator: "/") {
      current = current.appending(path: String(component))
      var info = stat()
      if lstat(current.path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK {
        throw ResourceError(.invalidSource, "Tag '\(tag)' reaches '\(path)' through the symlink '\(current.path)'; odr packs regular files only, so a link cannot pull in files from outside the folder.")
      }
    }
  }

  /// Every regular file below `folder` (relative to `root`), recursively.
  package static func regularFiles(under folder: String, in root: URL, tag: String) throws -> [String] {
    let names: [String]
    do { names = try FileManager.default.contentsOfDirectory(atPath: root.appending(path: folder).path) } catch {
      throw Self.error("Cannot read the folder '\(root.appending(path: folder).path)'")
    }
    var files: [String] = []
    for name in names.sorted() {
      let path = folder + "/" + name
      try Naming.validate(path: path, in: tag)
      switch kind(of: root.appending(path: path)) {
      case .file: files.append(path)
      case .directory: files += try regularFiles(under: path, in: root, tag: tag)
      case .missing: continue
      case .other:
        throw ResourceError(.invalidSource, "Tag '\(tag)' includes '\(path)', which is a symlink or special file; odr packs regular files only.")
      }
    }
    return files
  }

  /// SHA-256 and size of a file, read in chunks (constant memory).
  package static func sha256(of url: URL) throws -> (size: Int64, sha256: String) {
    var hasher = SHA256()
    var size: Int64 = 0
    try readChunks(of: url) { chunk in
      hasher.update(bufferPointer: chunk)
      size += Int64(chunk.count)
    }
    return (size, hex(hasher.finalize()))
  }

  /// Calls `body` with successive 1 MiB chunks of the file at `url`.
  package static func readChunks(of url: URL, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
    let fd = open(url.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0 else { throw error("Cannot read '\(url.path)'") }
    defer { close(fd) }
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
    defer { buffer.deallocate() }
    while true {
      let n: Int
      do { n = try FileDescriptor(rawValue: fd).read(into: buffer) } catch { throw Self.error("Cannot read '\(url.path)'", error) }
      if n == 0 { return }
      try body(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
    }
  }

  /// Lowercase hex of a digest.
  package static func hex(_ digest: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var bytes: [UInt8] = []
    for byte in digest { bytes += [digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]] }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// ``PrivateFolder/make(_:)``, its failure a ResourceError (`.outOfSpace`
  /// on a full disk, else `.io`) that says what the folder is for
  /// (`purpose`: "the download cache of com.example.demo") and, when it
  /// could not be made at all (a system user whose home is `/nonexistent`),
  /// where to point odr instead.
  package static func makePrivateDirectory(_ url: URL, for purpose: String) throws {
    do { try PrivateFolder.make(url) } catch {
      let unmade = [ENOENT, EACCES, EROFS, ENOTDIR].contains(error.errno)
      let advice = unmade ? " odr keeps its download cache in $XDG_CACHE_HOME (else ~/.cache) and its state (trust, pins) in $XDG_STATE_HOME (else ~/.local/state): point them at folders this user may write — for a systemd service, CacheDirectory= and StateDirectory= with Environment=XDG_CACHE_HOME=%C/NAME XDG_STATE_HOME=%S/NAME (see the README's unit)." : ""
      throw ResourceError(error.isOutOfSpace ? .outOfSpace : .io, "Cannot make \(purpose) (\(url.path)): \(error.message)\(advice)", underlying: error)
    }
  }

  package static func makeDirectory(_ url: URL) throws {
    do { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) } catch {
      throw Self.error("Cannot create the folder '\(url.path)'")
    }
  }

  /// Writes `data` to a temporary name beside `url`, flushes it, then
  /// renames it over `url`: readers see the old file or the new one.
  /// `durable: false` skips the two fsyncs, for state a power loss may
  /// lose without harm (a killed process still leaves the old file or the
  /// new one: the page cache outlives it).
  package static func atomicWrite(_ data: Data, to url: URL, mode: mode_t = 0o644, durable: Bool = true) throws {
    try atomically(to: url, mode: mode, durable: durable) { fd throws in
      try data.withUnsafeBytes { bytes throws in try writeAll(fd, bytes, path: url.path) }
    }
  }

  /// ``atomicWrite(_:to:mode:durable:)`` for a document a web server
  /// serves (a published catalog): its modification time ends up at least
  /// one second after the file it replaces. HTTP validators (nginx's ETag
  /// and Last-Modified) have a resolution of one second, so a catalog
  /// replaced within the second of the last one, at the same size, would
  /// keep its validator, and clients would be told "304: still the one you
  /// have".
  package static func atomicWriteChangingValidator(_ data: Data, to url: URL, mode: mode_t = 0o644) throws {
    var before = stat()
    let previous = stat(url.path, &before) == 0 ? before.st_mtim.tv_sec : nil
    try atomicWrite(data, to: url, mode: mode)
    var after = stat()
    guard let previous, stat(url.path, &after) == 0, after.st_mtim.tv_sec <= previous else { return }
    var times = [after.st_atim, timespec(tv_sec: previous + 1, tv_nsec: 0)]
    guard utimensat(AT_FDCWD, url.path, &times, 0) == 0 else { throw error("Cannot set the modification time of '\(url.path)'") }
  }

  /// Copies `source` to `url` atomically, as ``atomicWrite(_:to:)``.
  package static func atomicCopy(from source: URL, to url: URL) throws {
    try atomically(to: url) { fd throws in
      try readChunks(of: source) { chunk throws in try writeAll(fd, chunk, path: url.path) }
    }
  }

  private static func atomically(to url: URL, mode: mode_t = 0o644, durable: Bool = true, _ body: (Int32) throws -> Void) throws {
    let folder = url.deletingLastPathComponent()
    let temp = folder.appending(path: ".\(url.lastPathComponent).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
    let fd = open(temp.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
    guard fd >= 0 else { throw error("Cannot create '\(temp.path)'") }
    var installed = false
    defer { if !installed { unlink(temp.path) } }
    do {
      try body(fd)
      guard !durable || fsync(fd) == 0 else { throw error("Cannot write '\(url.path)'") }
    } catch {
      close(fd)
      throw error
    }
    close(fd)
    guard rename(temp.path, url.path) == 0 else { throw error("Cannot replace '\(url.path)'") }
    installed = true
    if durable { syncDirectory(folder) }
  }

  /// Makes renames in `folder` durable.
  package static func syncDirectory(_ folder: URL) {
    let dir = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if dir >= 0 { fsync(dir); close(dir) }
  }

  package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
    do { _ = try FileDescriptor(rawValue: fd).writeAll(bytes) } catch { throw Self.error("Cannot write '\(path)'", error) }
  }

  /// A ResourceError from `errno`, with advice for the common cases.
  package static func error(_ what: String) -> ResourceError {
    error(what, Errno(rawValue: errno))
  }

  /// A ResourceError from a failed system call (an `Errno`), with advice for
  /// the common cases; the `Errno` is its ``ResourceError/underlying``.
  /// The `errno` a Foundation error carries (a `POSIXError`, or a
  /// `CocoaError` whose underlying error is one).
  package static func posixCode(of error: any Error) -> Errno? {
    if let posix = error as? POSIXError { return Errno(rawValue: posix.code.rawValue) }
    guard let posix = (error as? CocoaError)?.underlying as? POSIXError else { return nil }
    return Errno(rawValue: posix.code.rawValue)
  }

  /// A Foundation file error is read for the `errno` it carries (never
  /// the global `errno`, which later calls may have changed).
  package static func error(_ what: String, _ failure: any Error) -> ResourceError {
    guard let failure = failure as? Errno ?? posixCode(of: failure) else { return ResourceError(.io, "\(what): \(failure).", underlying: failure) }
    let reason = String(cString: strerror(failure.rawValue))
    switch failure {
    case .noSpace, .diskQuotaExceeded: return ResourceError(.outOfSpace, "\(what): the disk is full (\(reason)). Free some space and try again.", underlying: failure)
    case .permissionDenied, .notPermitted: return ResourceError(.io, "\(what): permission denied. Check the folder's owner and mode.", underlying: failure)
    default: return ResourceError(.io, "\(what): \(reason).", underlying: failure)
    }
  }

}
