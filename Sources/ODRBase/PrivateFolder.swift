public import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The folders odr keeps to itself (its cache, its state, their locks).
public enum PrivateFolder {
  /// Opens the folder at `url`, creating it — and any missing parent — with
  /// mode 0700. An existing one is used as it is (its mode is the user's
  /// business, and it may be read-only) but only if it is a real folder
  /// owned by this user: a symlink or another user's folder (one made in
  /// advance under a shared `/tmp`) would send odr's locks, writes and
  /// deletions where that user chose.
  public static func make(_ url: URL) throws(SystemError) {
    var info = stat()
    if lstat(url.path, &info) != 0 {
      let parent = url.deletingLastPathComponent()
      if parent.path != url.path, access(parent.path, F_OK) != 0 { try make(parent) }
      guard mkdir(url.path, 0o700) == 0 || errno == EEXIST else { throw .fromErrno("Cannot create the folder '\(url.path)'") }
      guard lstat(url.path, &info) == 0 else { throw .fromErrno("Cannot open the folder '\(url.path)'") }
    }
    guard info.st_mode & S_IFMT == S_IFDIR else {
      throw SystemError("'\(url.path)' is a symlink or not a folder, so odr refuses to use it (its writes and deletions would land elsewhere). Remove it; odr then makes a new folder.", errno: ENOTDIR)
    }
    guard info.st_uid == getuid() else {
      throw SystemError("'\(url.path)' belongs to another user (uid \(info.st_uid)), so odr refuses to use it. Remove it, or point XDG_CACHE_HOME / XDG_STATE_HOME at a folder of your own.", errno: EPERM)
    }
  }
}
