import Foundation
import Testing

/// With `ODR_TEST_CHILD_LOG` set to a file, each program a test starts
/// through ``Command`` is appended to it as one line: the test, the
/// program's name, the first line of its first two arguments.
/// `scripts/diagnostics/count-children` reads it to say which suites
/// start the processes it counts.
enum ChildLog {
  private static let file: FileHandle? = ProcessInfo.processInfo.environment["ODR_TEST_CHILD_LOG"].flatMap {
    _ = FileManager.default.createFile(atPath: $0, contents: nil)
    return FileHandle(forWritingAtPath: $0)
  }
  private static let lock = NSLock()

  static func record(_ executable: String, _ arguments: [String]) {
    guard let file else { return }
    let test = Test.current.map { String(describing: $0.id) } ?? "(no test)"
    let inFolder = executable.hasSuffix("/sh") && arguments.count > 3 && arguments[0] == "-c" && arguments[1].hasPrefix("cd ")
    let program = inFolder ? arguments[3] : executable
    let words = (inFolder ? arguments.dropFirst(4) : arguments[...]).prefix(2).joined(separator: " ")
    let line = "\(test)\t\((program as NSString).lastPathComponent)\t\(words.split(whereSeparator: \.isNewline).first ?? "")\n"
    lock.withLock { file.write(Data(line.utf8)) }
  }
}
