internal import CKeyctl
public import FoundationEssentials
import ODRBase
#if canImport(Glibc)
import Glibc
#endif

/// A ``SecretStore`` in the Linux kernel's keyring (keyctl(2)): no daemon,
/// no D-Bus, nothing on disk. For servers and containers.
///
/// Each service is a keyring `odr:<service>` linked into the user keyring
/// (`@u`); each key is a `user` key `odr:<service>:<name>` in it, and odr's
/// records (metadata, import journal) are keys beside them. A script reads
/// one with keyutils:
///
/// ```sh
/// keyctl print %user:odr:com.example.demo:Weather
/// keyctl show %keyring:odr:com.example.demo
/// ```
///
/// Keys keep the kernel's possessor-only permissions: every process of the
/// user that reaches them through its user keyring can read them (as with
/// an unlocked Secret Service); the sandboxed command of `odr exec
/// --proxy` cannot make a keyring call at all (its seccomp program). A
/// process whose session keyring does not link the user keyring (a systemd
/// service's private keyring, `keyctl session`) gets it linked on its first
/// denied read or write.
/// They do not survive a reboot. The kernel's quotas apply (for a user
/// other than root, by default 200 keys and 20,000 bytes in all:
/// `/proc/sys/kernel/keys/maxkeys`, `maxbytes`); one value holds at most
/// 32,767 bytes. Each failure has its own message: quota, size, and the
/// system calls refused (a container's seccomp profile).
public struct KernelKeyringStore: SecretStore, BlockingReads {
  public let service: String
  public let stateHome: URL?
  public var kind: KeyStoreKind { .kernel }

  /// The largest value the kernel keeps in one `user` key.
  public static let maxValueBytes = 32_767

  /// How long a key this store writes lives (`keyctl_set_timeout`); nil:
  /// until deleted or reboot. Each write sets it again: the last one decides.
  public var lifetime: Duration?

  /// Creates the store of `service`; nothing is asked of the kernel until
  /// the first call. `stateHome`: where its imports' lock lives (default:
  /// this process's XDG state folder).
  public init(service: String, stateHome: URL? = nil, lifetime: Duration? = nil) throws(KeyringError) {
    try KeyringInput.validate(service: service)
    self.service = service
    self.stateHome = stateHome
    self.lifetime = lifetime
  }

  /// Gives the keys `names` (those that are there), and odr's metadata
  /// record, ``lifetime`` again from now: a fetch that found them unchanged
  /// still renews them.
  public func renew(_ names: [String]) throws {
    for name in names { try KeyringInput.validate(name: name) }
    for name in names + [KeyringInput.metadataName] {
      guard let serial = try find(name) else { continue }
      try expire(serial, name)
    }
  }

  private func expire(_ serial: Int32, _ name: String) throws {
    let seconds = lifetime.map { UInt32(clamping: max(1, $0.components.seconds)) } ?? 0
    guard Self.possessing({ odr_keyctl_set_timeout(serial, seconds) }) == 0 else { throw Self.failure(errno, "set the lifetime of \(name) of \(service)") }
  }

  // MARK: SecretStore

  public func setValue(_ value: String, for name: String) throws {
    try KeyringInput.validate(name: name)
    try KeyringInput.validate(value: value, for: name)
    let bytes = Array(value.utf8)
    guard bytes.count <= Self.maxValueBytes else {
      throw KeyringError(.invalidInput, "The value of \(name) is \(bytes.count) bytes; the kernel keyring holds at most \(Self.maxValueBytes) bytes in one key. Keep it in the Secret Service (--store secret-service).")
    }
    let keyring = try serviceKeyring(creating: true)!
    let serial = Self.possessing { bytes.withUnsafeBytes { odr_add_key("user", description(of: name), $0.baseAddress, bytes.count, keyring) } }
    guard serial >= 0 else { throw Self.failure(errno, "store \(name) of \(service)") }
    try expire(serial, name)
  }

  public func value(for name: String) throws -> String {
    try KeyringInput.validate(name: name)
    // the names only serve the message
    guard let value = try read(name) else { throw KeyringError.notFound(name, service: service, store: kind, among: dropping(.bestEffort) { try names() }) }
    return value
  }

  public func valueAndJournal(for name: String) throws -> (value: String?, journal: String?) {
    try valueAndJournalBlocking(for: name)
  }

  public func valueAndJournalBlocking(for name: String) throws -> (value: String?, journal: String?) {
    try KeyringInput.validate(name: name)
    return (try read(name), try read(KeyringInput.journalName))
  }

  public func values(for names: Set<String>?) throws -> [String: String] {
    guard let names else { return try valuesAndRecords().filter { !KeyringInput.isRecord($0.key) } }
    var result: [String: String] = [:]
    for name in names {
      try KeyringInput.validate(name: name)
      result[name] = try read(name)
    }
    return result
  }

  public func valuesAndRecords() throws -> [String: String] {
    var result: [String: String] = [:]
    for (name, serial) in try members() { result[name] = try payload(of: serial) }
    return result
  }

  @discardableResult
  public func deleteValue(for name: String) throws -> Bool {
    try KeyringInput.validate(name: name)
    guard let keyring = try serviceKeyring(creating: false), let serial = try find(name) else { return false }
    guard Self.possessing({ odr_keyctl_unlink(serial, keyring) }) == 0 else { throw Self.failure(errno, "delete \(name) of \(service)") }
    return true
  }

  public func names() throws -> [String] {
    try members().keys.filter { !KeyringInput.isRecord($0) }.sorted()
  }

  public func namesBlocking() throws -> [String] { try names() }

  /// Deletes every key and record of the service, then its keyring.
  @discardableResult
  public func deleteAll() throws -> Int {
    guard let keyring = try serviceKeyring(creating: false) else { return 0 }
    let members = try members()
    for name in members.keys { try deleteValue(for: name) }
    guard odr_keyctl_unlink(keyring, Self.userKeyring) == 0 else { throw Self.failure(errno, "delete the keyring of \(service)") }
    return members.keys.count { !KeyringInput.isRecord($0) }
  }

  // MARK: The kernel's calls

  static let userKeyring: Int32 = -4  // KEY_SPEC_USER_KEYRING
  static let sessionKeyring: Int32 = -3  // KEY_SPEC_SESSION_KEYRING

  private var keyringDescription: String { "odr:\(service)" }
  private func description(of name: String) -> String { "odr:\(service):\(name)" }

  /// The service's keyring, made and linked into the user keyring when
  /// `creating` (else nil when there is none).
  private func serviceKeyring(creating: Bool) throws -> Int32? {
    let found = odr_keyctl_search(Self.userKeyring, "keyring", keyringDescription)
    if found >= 0 { return found }
    let error = errno
    guard [ENOKEY, EKEYREVOKED, EKEYEXPIRED].contains(error) else { throw Self.failure(error, "open the keyring of \(service)") }
    guard creating else { return nil }
    let made = odr_add_key("keyring", keyringDescription, nil, 0, Self.userKeyring)
    guard made >= 0 else { throw Self.failure(errno, "create the keyring of \(service)") }
    return made
  }

  /// The serial of key `name`, nil when there is none.
  private func find(_ name: String) throws -> Int32? {
    let serial = odr_keyctl_search(Self.userKeyring, "user", description(of: name))
    if serial >= 0 { return serial }
    let error = errno
    if [ENOKEY, EKEYREVOKED, EKEYEXPIRED].contains(error) { return nil }
    throw Self.failure(error, "look up \(name) of \(service)")
  }

  private func read(_ name: String) throws -> String? {
    guard let serial = try find(name) else { return nil }
    return try payload(of: serial)
  }

  /// A key's payload as text. A read denied for want of possession (this
  /// process's session keyring does not link the user keyring) links it
  /// once and reads again.
  private func payload(of serial: Int32) throws -> String {
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let length = Self.possessing { buffer.withUnsafeMutableBytes { odr_keyctl_read(serial, $0.baseAddress, $0.count) } }
      guard length >= 0 else { throw Self.failure(errno, "read a key of \(service)") }
      if length > buffer.count {
        buffer = [UInt8](repeating: 0, count: length)
        continue
      }
      defer { for index in buffer.indices { buffer[index] = 0 } }
      guard let text = String(validating: buffer[..<length], as: UTF8.self) else {
        throw KeyringError(.failed, "A key of \(service) in the kernel keyring is not UTF-8 text; odr only handles text keys.")
      }
      return text
    }
  }

  /// `call`'s result; if it was denied for want of possession (EACCES:
  /// this process's session keyring — a fresh one of `keyctl session`, a
  /// systemd service's private one — does not link the user keyring), the
  /// user keyring is linked into the session keyring once and `call` runs
  /// again. Writes need it as reads do: the keys are possessor-only.
  private static func possessing<Result: BinaryInteger>(_ call: () -> Result) -> Result {
    let result = call()
    guard result < 0, errno == EACCES, linkUserKeyringIntoSession() else { return result }
    return call()
  }

  /// Links the user keyring into this process's session keyring (keyctl
  /// link @u @s): what makes its keys this process's own.
  private static func linkUserKeyringIntoSession() -> Bool {
    odr_keyctl_link(userKeyring, sessionKeyring) == 0
  }

  /// The keys and records of the service by name, with their serials.
  private func members() throws -> [String: Int32] {
    guard let keyring = try serviceKeyring(creating: false) else { return [:] }
    let prefix = description(of: "")
    var result: [String: Int32] = [:]
    for serial in try Self.serials(in: keyring, doing: "list the keys of \(service)") {
      guard let described = Self.describe(serial), described.type == "user", described.description.hasPrefix(prefix) else { continue }
      result[String(described.description.dropFirst(prefix.count))] = serial
    }
    return result
  }

  /// The serials a keyring links to.
  private static func serials(in keyring: Int32, doing: String) throws -> [Int32] {
    var serials = [Int32](repeating: 0, count: 256)
    while true {
      let length = possessing { serials.withUnsafeMutableBytes { odr_keyctl_read(keyring, $0.baseAddress, $0.count) } }
      guard length >= 0 else { throw failure(errno, doing) }
      let count = length / MemoryLayout<Int32>.size
      guard count > serials.count else { return Array(serials[..<count]) }
      serials = [Int32](repeating: 0, count: count)
    }
  }

  /// Every service with keys in this user's kernel keyring (odr's private
  /// services left out), with how many keys each holds: what `odr doctor`
  /// shows.
  public static func keyCounts(stateHome: URL? = nil) throws -> [String: Int] {
    var counts: [String: Int] = [:]
    for serial in try serials(in: userKeyring, doing: "list the keyrings of the user keyring") {
      guard let described = describe(serial), described.type == "keyring", described.description.hasPrefix("odr:") else { continue }
      let service = String(described.description.dropFirst("odr:".count))
      guard dropping(.isTheAnswer, { try KeyringInput.validate(keyService: service) }) != nil else { continue }
      let count = try KernelKeyringStore(service: service, stateHome: stateHome).names().count
      if count > 0 { counts[service] = count }
    }
    return counts
  }

  /// A key's type and description; nil when it went meanwhile.
  private static func describe(_ serial: Int32) -> (type: String, description: String)? {
    var buffer = [UInt8](repeating: 0, count: 512)
    let length = buffer.withUnsafeMutableBytes { odr_keyctl_describe(serial, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count) }
    guard length > 0, length <= buffer.count else { return nil }
    // "type;uid;gid;perm;description", NUL-terminated
    let fields = String(decoding: buffer[..<(length - 1)], as: UTF8.self).split(separator: ";", maxSplits: 4, omittingEmptySubsequences: false)
    guard fields.count == 5 else { return nil }
    return (String(fields[0]), String(fields[4]))
  }

  /// The error of a failed call (errno `code`) to `doing`, said the kernel
  /// keyring's way.
  static func failure(_ code: Int32, _ doing: String) -> KeyringError {
    switch code {
    case ENOSYS, EPERM:
      return KeyringError(.noProvider, "The kernel keyring refused the call to \(doing): the keyctl system calls are not allowed here (\(String(cString: strerror(code)))), as under a container's default seccomp profile. Allow add_key, keyctl and request_key (for Docker: --security-opt seccomp=PROFILE with them allowed), or keep the keys elsewhere: --store secret-service, or `odr exec --fetch TAG -- CMD` (keys in memory only).")
    case EDQUOT:
      return KeyringError(.quotaExceeded, "The kernel keyring's quota is full, so odr could not \(doing) (for a user other than root, the kernel allows 200 keys and 20,000 bytes by default). Delete keys you no longer need (odr delete NAME --store kernel; `keyctl show @u` lists them all), or raise the quota: sysctl kernel.keys.maxkeys and kernel.keys.maxbytes.")
    case EACCES:
      return KeyringError(.failed, "The kernel keyring denied the call to \(doing) (\(String(cString: strerror(code)))): the key belongs to another user, or this process cannot reach the user keyring (another user namespace).")
    default:
      return KeyringError(.failed, "The kernel keyring could not \(doing): \(String(cString: strerror(code))).")
    }
  }
}
