public import ODRBase
/// The one error type of ODRKeyring.
///
/// `message` says what happened and what to do about it. It never contains a
/// secret value: messages name keys and services only.
public struct KeyringError: Error, Sendable, CustomStringConvertible {
  /// What kind of failure this is (its codes: `ErrorCode where Owner == KeyringError`).
  public typealias Code = ErrorCode<KeyringError>

  /// What kind of failure this is.
  public let code: Code
  /// What happened and what to do, for a person to read.
  public let message: String
  /// The cause: the provider's or GLib's own error (``GLibError``), when
  /// there is one.
  public let underlying: (any Error)?
  /// For `.locked`: the D-Bus path of the locked collection (to ask the
  /// desktop to unlock it).
  var lockedPath: String?
  /// For `.locked`: the locked collection's label.
  var lockedLabel: String?

  /// Creates an error.
  public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
    self.code = code
    self.message = message
    self.underlying = underlying
  }

  public var description: String {
    let cause = underlying.map { "\($0)" } ?? ""
    return cause.isEmpty ? message : "\(message) (\(cause))"
  }
}

extension KeyringError {
  /// What to do without a reachable keyring, in the order users need it.
  /// The last line runs as printed, with the user's command for `odr …`,
  /// whether or not the user has a login keyring (its own data folder, so
  /// a locked one is never asked for; KeyringFailureTests runs it).
  package static let unavailableHelp = """
    On a server or in a container, use the kernel keyring: `--store kernel` (or ODR_STORE=kernel; no daemon, no D-Bus). \
    For a one-shot job, skip the keyring: `odr exec --fetch TAG -- CMD` and `odr env --fetch TAG` read the pack into memory. \
    Or run odr in a throwaway keyring of its own, gone when the command ends: \(throwawayKeyring)
    """

  /// A private session bus and an unlocked gnome-keyring in a data folder
  /// of their own, around `odr …`.
  package static let throwawayKeyring =
    #"`dbus-run-session -- sh -c 'd=$(mktemp -d) && printf odr | XDG_DATA_HOME="$d" gnome-keyring-daemon --unlock --components=secrets >/dev/null && odr …; s=$?; rm -rf "$d"; exit $s'`"#

  /// The same advice for an app that links the library.
  package static let libraryHelp = """
    In an app on a server or in a container, give the provider a store of its own: \
    `APIKeyProvider(store: try KernelKeyringStore(service: …))` (the kernel keyring: no daemon, no D-Bus), \
    or `MemoryStore(service: …)` with a catalog and trust, fetched into on the first miss (no keyring at all).
    """

  static func noSessionBus(_ underlying: (any Error)?) -> KeyringError {
    KeyringError(.noSessionBus, "No D-Bus session bus is reachable, so the keyring cannot be used. \(libraryHelp)", underlying: underlying)
  }

  static func noLibrary(_ reason: String) -> KeyringError {
    KeyringError(.noLibrary, "libsecret could not be loaded (\(reason)), so the desktop keyring cannot be used. Install it (`sudo apt install libsecret-1-0`), or: \(libraryHelp)")
  }

  static func noProvider(_ underlying: (any Error)?) -> KeyringError {
    KeyringError(.noProvider, "No Secret Service provider is running on the session bus (nothing owns org.freedesktop.secrets). Start one with `gnome-keyring-daemon --start --components=secrets`, or: \(libraryHelp)", underlying: underlying)
  }

  /// This error as `odr` says it: the advice for a keyring that cannot be
  /// reached names commands (``unavailableHelp``), not the library's types.
  package var forCommandLine: KeyringError {
    guard message.contains(Self.libraryHelp) else { return self }
    var error = KeyringError(code, message.replacing(Self.libraryHelp, with: Self.unavailableHelp), underlying: underlying)
    error.lockedPath = lockedPath
    error.lockedLabel = lockedLabel
    return error
  }

  static func noDefaultCollection(_ underlying: (any Error)? = nil) -> KeyringError {
    KeyringError(.noDefaultCollection, "The Secret Service has no default collection to store keys in. Create a keyring and make it the default (for example with seahorse), or log in once so the login keyring is created.", underlying: underlying)
  }

  static func locked(_ collection: String, path: String? = nil) -> KeyringError {
    var error = KeyringError(.locked, "The keyring collection '\(collection)' is locked, and no desktop prompt could unlock it here. Unlock it in your desktop session (log in, or unlock it in Passwords and Keys / seahorse), then try again; odr asks the desktop itself when it runs in a graphical session.")
    error.lockedPath = path
    error.lockedLabel = collection
    return error
  }

  static func promptDismissed(_ collection: String) -> KeyringError {
    KeyringError(.locked, "The keyring collection '\(collection)' is locked, and its unlock prompt was dismissed. Unlock it (answer the prompt, or in Passwords and Keys / seahorse), then try again.")
  }

  static func promptUnanswered(_ deadline: Duration) -> KeyringError {
    KeyringError(.timeout, "The keyring's unlock prompt was not answered within \(deadline.formattedSeconds). Answer it within --timeout (give more time, for example --timeout 60), or unlock the keyring first.")
  }

  static func providerGone(_ underlying: (any Error)?) -> KeyringError {
    KeyringError(.noProvider, "The Secret Service provider went away while odr was using it (it crashed or was stopped), and nothing provides org.freedesktop.secrets now. Start it again (for example log in to the desktop again, or `gnome-keyring-daemon --start --components=secrets`) and run the command again; a cut-short import is put back by the next fetch or `odr doctor --repair`.", underlying: underlying)
  }

  static func providerChanged(_ underlying: (any Error)?) -> KeyringError {
    KeyringError(.noProvider, "The Secret Service provider was restarted or replaced while odr was using it (the one answering now does not know odr's session). Run the command again; a cut-short import is put back by the next fetch or `odr doctor --repair`.", underlying: underlying)
  }

  /// No key `name`; `names`: the keys the service holds (nil: not known),
  /// the closest of which is suggested (a typo). A kernel keyring that
  /// holds none is said to be emptied, as after a reboot.
  package static func notFound(_ name: String, service: String, store: KeyStoreKind = .secretService,
                               among names: [String]? = nil) -> KeyringError {
    let option = store == .secretService ? "" : " --store \(store.rawValue)"
    let reboot = store == .kernel && names?.isEmpty == true ? " The kernel keyring holds nothing of \(service): it is emptied at reboot, so fetch again (`odr fetch APIKeys --store kernel`; at boot, see the README's unit)." : ""
    if let close = NameSuggestion.closest(to: name, among: names ?? []) {
      return KeyringError(.notFound, "No key '\(name)' for service '\(service)' in \(store.phrase). Did you mean '\(close)'? (`odr list\(option)` shows the stored keys.)")
    }
    return KeyringError(.notFound, "No key '\(name)' for service '\(service)' in \(store.phrase).\(reboot) `odr list\(option)` shows the stored keys; `odr set \(name)\(option)` stores one.")
  }

  static func timeout(_ deadline: Duration) -> KeyringError {
    KeyringError(.timeout, "The Secret Service did not answer within \(deadline.formattedSeconds) (the keyring daemon may be hung or stopped). Restart it, or allow more time with `--timeout`.")
  }
}

extension Duration {
  var formattedSeconds: String {
    let ms = components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    return ms % 1000 == 0 ? "\(ms / 1000) s" : "\(ms) ms"
  }
}

extension KeyringError: CodedError {
  public var domain: String { "keyring" }
  public var isTransient: Bool { [.timeout, .locked, .noSessionBus, .noProvider].contains(code) }
}

extension ErrorCode where Owner == KeyringError {
  /// No D-Bus session bus could be reached.
  public static let noSessionBus = Self("no-session-bus")
  /// libsecret (libsecret-1.so.0, with GLib) could not be loaded.
  public static let noLibrary = Self("no-library")
  /// A bus is there, but nothing provides `org.freedesktop.secrets`.
  public static let noProvider = Self("no-provider")
  /// The provider has no `default` collection to store items in.
  public static let noDefaultCollection = Self("no-default-collection")
  /// The collection holding (or meant to hold) the item is locked.
  public static let locked = Self("locked")
  /// No item with that name exists for the service.
  public static let notFound = Self("not-found")
  /// The provider did not answer within the deadline.
  public static let timeout = Self("timeout")
  /// A name, service or value was refused before anything was sent.
  public static let invalidInput = Self("invalid-input")
  /// A service reserved for odr's own private keys (`odr.identity`,
  /// `odr.signing-key`, anything under `odr.`), asked of a command that
  /// handles API keys.
  public static let reserved = Self("reserved")
  /// The kernel keyring's quota for this user is full.
  public static let quotaExceeded = Self("quota-exceeded")
  /// Any other failure reported by the provider.
  public static let failed = Self("failed")
}
