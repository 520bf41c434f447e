import CHardening
import Foundation
import ODRTesting
import Testing

/// The seccomp program odr passes to bubblewrap is the one libseccomp
/// makes of its rules (scripts/lib/seccomp-program): generated once,
/// committed, and compared here with what this machine's libseccomp makes
/// of them now, for this architecture and the other one.
@Suite(.enabled(if: TestSelection.untagged)) struct SeccompProgramTests {
  @Test func theCommittedProgramIsLibseccompsOwn() async throws {
    var length: UInt = 0
    let program = Data(bytes: odr_seccomp_program(&length), count: Int(length))
    let native = try #require(["x86_64", "aarch64"].first { ProcessInfo.processInfo.machineHardwareName == $0 })
    let generated = try await Command.run("/usr/bin/env", ["python3", Paths.packageRoot.appending(path: "scripts/lib/seccomp-program").path, "hex", native])
    try #require(generated.status == 0, "\(generated.stderr)")
    #expect(program.map { String(format: "%02x", $0) }.joined() == generated.stdout.trimmingCharacters(in: .whitespacesAndNewlines),
            "run scripts/lib/seccomp-program header to regenerate Sources/CHardening/SeccompProgram.h")
    // Both architectures' programs in the header, each as libseccomp makes it.
    let header = try String(contentsOf: Paths.packageRoot.appending(path: "Sources/CHardening/SeccompProgram.h"), encoding: .utf8)
    for (arch, macro) in [("x86_64", "__x86_64__"), ("aarch64", "__aarch64__")] {
      let made = try await Command.run("/usr/bin/env", ["python3", Paths.packageRoot.appending(path: "scripts/lib/seccomp-program").path, "hex", arch])
      let block = header.components(separatedBy: "#if defined(\(macro))").dropFirst().first?.components(separatedBy: "#endif").first ?? ""
      let committed = block.split(whereSeparator: { ", \n{};".contains($0) }).filter { $0.hasPrefix("0x") }.map { $0.dropFirst(2) }.joined()
      #expect(!committed.isEmpty && committed == made.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "\(arch)")
    }
  }
}

extension ProcessInfo {
  /// `uname -m`.
  var machineHardwareName: String {
    var name = utsname()
    uname(&name)
    return withUnsafeBytes(of: name.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
  }
}
