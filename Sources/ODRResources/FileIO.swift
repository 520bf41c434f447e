import FoundationEssentials
import Crypto
#if canImport(Glibc)
import Glibc
#endif

/// Small POSIX file operations with errors that name the path.
enum FileIO {
  enum Kind { case file, directory, missing, other }

  /// What is at `url`, without following a final symlink.
  static func kind(of url: URL) -> Kind {
    var info = stat()
    guard lstat(url.path, &info) == 0 else { return .missing }
    switch info.st_mode & S_IFMT {
    case S_IFREG: return .file
    case S_IFDIR: return .directory
    default: return .other
    }
  }

  static func size(of url: URL) -> Int64? {
    var info = stat()
    guard lstat(url.path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
    return Int64(info.st_size)
  }

  /// Refuses a symlink at any component of `path` below `root`.
  static func refuseSymlinks(along path: String, under root: URL, tag: String) throws {
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
  static func regularFiles(under folder: String, in root: URL, tag: String) throws -> [String] {
    let names: [String]
    do { names = try FileManager.default.contentsOfDirectory(atPath: root.appending(path: folder).path) } catch {
      throw ResourceError(.io, "Cannot read the folder '\(root.appending(path: folder).path)': \(error.localizedDescription).")
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

  /// SHA-256 and size of a file, read in 64 KiB chunks (constant memory).
  static func sha256(of url: URL) throws -> (size: Int64, sha256: String) {
    let fd = open(url.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0 else { throw error("Cannot read '\(url.path)'") }
    defer { close(fd) }
    var hasher = SHA256()
    var size: Int64 = 0
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if n < 0 && errno == EINTR { continue }
      if n < 0 { throw error("Cannot read '\(url.path)'") }
      if n == 0 { break }
      buffer.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
      size += Int64(n)
    }
    return (size, hasher.finalize().map { hex($0) }.joined())
  }

  static func makeDirectory(_ url: URL) throws {
    do { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) } catch {
      throw ResourceError(.io, "Cannot create the folder '\(url.path)': \(error.localizedDescription).")
    }
  }

  /// Writes `data` to a temporary name beside `url`, flushes it, then
  /// renames it over `url`: readers see the old file or the new one.
  static func atomicWrite(_ data: Data, to url: URL) throws {
    try atomically(to: url) { fd throws in
      try data.withUnsafeBytes { bytes throws in try writeAll(fd, bytes, path: url.path) }
    }
  }

  /// Copies `source` to `url` atomically, as ``atomicWrite(_:to:)``.
  static func atomicCopy(from source: URL, to url: URL) throws {
    let input = open(source.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    guard input >= 0 else { throw error("Cannot read '\(source.path)'") }
    defer { close(input) }
    try atomically(to: url) { fd throws in
      var buffer = [UInt8](repeating: 0, count: 64 * 1024)
      while true {
        let n = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        if n < 0 { throw error("Cannot read '\(source.path)'") }
        if n == 0 { return }
        try buffer.withUnsafeBytes { bytes throws in try writeAll(fd, UnsafeRawBufferPointer(rebasing: bytes[0..<n]), path: url.path) }
      }
    }
  }

  private static func atomically(to url: URL, _ body: (Int32) throws -> Void) throws {
    let folder = url.deletingLastPathComponent()
    let temp = folder.appending(path: ".\(url.lastPathComponent).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
    let fd = open(temp.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw error("Cannot create '\(temp.path)'") }
    var installed = false
    defer { if !installed { unlink(temp.path) } }
    do {
      try body(fd)
      guard fsync(fd) == 0 else { throw error("Cannot write '\(url.path)'") }
    } catch {
      close(fd)
      throw error
    }
    close(fd)
    guard rename(temp.path, url.path) == 0 else { throw error("Cannot replace '\(url.path)'") }
    installed = true
    // Make the rename itself durable.
    let dir = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if dir >= 0 { fsync(dir); close(dir) }
  }

  private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
    var offset = 0
    while offset < bytes.count {
      let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
      if n < 0 && errno == EINTR { continue }
      if n <= 0 { throw error("Cannot write '\(path)'") }
      offset += n
    }
  }

  /// A ResourceError from `errno`, with advice for the common cases.
  static func error(_ what: String) -> ResourceError {
    let code = errno
    let reason = String(cString: strerror(code))
    switch code {
    case ENOSPC, EDQUOT: return ResourceError(.outOfSpace, "\(what): the disk is full (\(reason)). Free some space and try again.")
    case EACCES, EPERM: return ResourceError(.io, "\(what): permission denied. Check the folder's owner and mode.")
    default: return ResourceError(.io, "\(what): \(reason).")
    }
  }

  private static func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]])
  }
}
