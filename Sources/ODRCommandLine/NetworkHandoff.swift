#if canImport(Glibc)
import ODRCI
import Glibc
#endif

/// Replaces the lean `odr` process with `odr-net` (same arguments, same
/// environment) when a command needs the network. Nothing has been written
/// or printed before this point, so the hand-off is invisible.
enum NetworkHandoff {
  static func exec() -> Never {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    let own = length > 0 ? String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
    let sibling = String(own[..<(own.lastIndex(of: "/").map { own.index(after: $0) } ?? own.startIndex)]) + "odr-net"
    var arguments: [UnsafeMutablePointer<CChar>?] = [strdup(sibling)] + CommandLine.arguments.dropFirst().map { strdup($0) } + [nil]
    CoreDumps.restoreForChild()  // odr-net disables them again, from the user's limit
    execv(sibling, &arguments)
    Output.error("HTTP(S) catalogs need the odr-net executable next to odr (\(sibling)): \(String(cString: strerror(errno))). Build it with `swift build --product odr-net`, or use a file:// catalog.")
    exit(1)
  }
}
