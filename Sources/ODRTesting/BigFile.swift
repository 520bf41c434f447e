public import Foundation

/// Big fixture files, made and written on a thread of their own: a test
/// that builds 48 MB on the cooperative pool holds one of its two threads
/// (on this machine) and every other test waits.
public enum BigFile {
  /// Writes `size` bytes of `fill` to `url` (creating its folder), the
  /// first byte of every 4 KiB page being its page number, so that no two
  /// neighbouring pages are alike.
  public static func write(_ url: URL, size: Int, fill: UInt8 = 0) async throws {
    try await Command.offPool {
      var bytes = Data(repeating: fill, count: size)
      bytes.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
        for offset in stride(from: 0, to: size, by: 4096) { buffer[offset] = UInt8(truncatingIfNeeded: offset >> 12) }
      }
      try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try bytes.write(to: url)
    }
  }
}
