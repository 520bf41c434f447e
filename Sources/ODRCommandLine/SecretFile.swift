import ODRBase
import FoundationEssentials
import ODRExec
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Files that hold secrets: written 0600 and atomically (a temporary name
/// beside the target, flushed, renamed), never over an existing file
/// unless `force`.
enum SecretFile {
  static func write(_ text: String, to path: String, force: Bool) throws {
    if !force && access(path, F_OK) == 0 {
      throw ExecError(.io, "'\(path)' exists; odr does not overwrite it without --force.")
    }
    let folder = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
    var template = Array("\(folder.isEmpty ? "/" : folder)/.odr-XXXXXX".utf8CString)
    let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    guard fd >= 0 else { throw ExecError(.io, "Cannot create a file in '\(folder)': \(String(cString: strerror(errno))).") }
    let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    var done = false
    defer {
      if !done { unlink(temporary) }
    }
    fchmod(fd, 0o600)
    do { _ = try FileDescriptor(rawValue: fd).writeAll(text.utf8) } catch {
      close(fd)
      throw ExecError(.io, "Cannot write '\(path)': \(error).", underlying: error as? Errno)
    }
    guard fsync(fd) == 0, close(fd) == 0 else { throw ExecError(.io, "Cannot write '\(path)': \(String(cString: strerror(errno))).") }
    guard rename(temporary, path) == 0 else { throw ExecError(.io, "Cannot write '\(path)': \(String(cString: strerror(errno))).") }
    done = true
  }

  /// The text of a file the user named.
  static func read(_ path: String) throws -> String {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw ExecError(.notFound, "Cannot read '\(path)'.")
    }
    guard let text = String(validating: data, as: UTF8.self) else { throw ExecError(.invalidInput, "'\(path)' is not UTF-8 text.") }
    return text
  }
}
