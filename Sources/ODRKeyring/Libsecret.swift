internal import CLibsecret
import Dispatch
import Synchronization

// Every call into libsecret and GLib lives in this file. No GLib type or C
// pointer leaves it: callers get Swift values and KeyringError.

/// Runs libsecret's blocking `…_sync` calls one at a time on a dedicated
/// serial queue (off the cooperative pool), each under a deadline and
/// cancellable by its task through a `GCancellable`.
final class Libsecret: Sendable {
  static let shared = Libsecret()
  private let queue = DispatchQueue(label: "odr.libsecret", qos: .userInitiated)

  /// Runs `body` on the libsecret queue. The call is cancelled when
  /// `deadline` passes (→ `.timeout`) or the task is cancelled
  /// (→ `CancellationError`).
  func perform<T: Sendable>(deadline: Duration, _ body: @escaping @Sendable (Session) throws -> T) async throws -> T {
    let cancellable = Cancellable()
    let timer = DispatchWorkItem { cancellable.cancel(.deadline) }
    DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(deadline.nanoseconds)), execute: timer)
    defer { timer.cancel() }
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        queue.async {
          let result = Result { try body(Session(cancellable: cancellable, deadline: deadline)) }
          continuation.resume(with: result)
        }
      }
    } onCancel: {
      cancellable.cancel(.task)
    }
  }
}

/// A `GCancellable` that remembers why it was fired.
final class Cancellable: @unchecked Sendable {
  enum Reason: UInt8 { case none, deadline, task }
  // g_cancellable_cancel is thread-safe; the pointer never changes.
  let pointer: UnsafeMutablePointer<GCancellable>
  private let reason = Atomic<UInt8>(Reason.none.rawValue)

  init() { pointer = g_cancellable_new() }
  deinit { g_object_unref(pointer) }

  func cancel(_ why: Reason) {
    if reason.compareExchange(expected: Reason.none.rawValue, desired: why.rawValue, ordering: .relaxed).exchanged {
      g_cancellable_cancel(pointer)
    }
  }

  var firedReason: Reason { Reason(rawValue: reason.load(ordering: .relaxed)) ?? .none }
}

/// One call's view of libsecret: attribute tables in, Swift values out.
struct Session {
  let cancellable: Cancellable
  let deadline: Duration

  // MARK: Items

  /// Looks up one secret. nil when no unlocked item matches.
  func lookup(_ attributes: [String: String]) throws -> String? {
    let service = try connect()
    defer { g_object_unref(service) }
    var error: UnsafeMutablePointer<GError>?
    let value = withAttributeTable(attributes) { secret_service_lookup_sync(service, nil, $0, cancellable.pointer, &error) }
    try check(error)
    guard let value else { return nil }
    defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
    return try text(of: value)
  }

  /// Stores a secret in the default collection, replacing an item whose
  /// attributes are exactly `attributes` (the Secret Service rule).
  func store(_ attributes: [String: String], label: String, secret: String) throws {
    let service = try connect()
    defer { g_object_unref(service) }
    var error: UnsafeMutablePointer<GError>?
    let value: OpaquePointer = secret.withCString { secret_value_new($0, gssize(secret.utf8.count), "text/plain") }
    defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
    let ok = withAttributeTable(attributes) {
      secret_service_store_sync(service, nil, $0, nil, label, value, cancellable.pointer, &error)
    }
    do {
      try check(error)
    } catch let failure as KeyringError where failure.code == .failed {
      // The default alias may point at a collection that no longer exists.
      throw try defaultCollection(of: service) == nil ? .noDefaultCollection(failure.underlying) : failure
    }
    if ok == 0 { throw lockedOr(KeyringError(.failed, "The Secret Service refused to store the key.")) }
  }

  /// Deletes every unlocked item matching `attributes`. False when none matched.
  func clear(_ attributes: [String: String]) throws -> Bool {
    let service = try connect()
    defer { g_object_unref(service) }
    var error: UnsafeMutablePointer<GError>?
    let ok = withAttributeTable(attributes) { secret_service_clear_sync(service, nil, $0, cancellable.pointer, &error) }
    try check(error)
    return ok != 0
  }

  /// Items matching `attributes`: each item's attributes, and its secret
  /// when `loadSecrets`. Throws `.locked` if a matching item is locked.
  func search(_ attributes: [String: String], loadSecrets: Bool) throws -> [(attributes: [String: String], secret: String?)] {
    let service = try connect()
    defer { g_object_unref(service) }
    var error: UnsafeMutablePointer<GError>?
    var flags = SECRET_SEARCH_ALL.rawValue
    if loadSecrets { flags |= SECRET_SEARCH_LOAD_SECRETS.rawValue }
    let list = withAttributeTable(attributes) {
      secret_service_search_sync(service, nil, $0, SecretSearchFlags(rawValue: flags), cancellable.pointer, &error)
    }
    try check(error)
    // Nothing found may mean "all locked": say so rather than "empty".
    guard list != nil else {
      if let label = try lockedCollectionLabel() { throw KeyringError.locked(label) }
      return []
    }
    defer { g_list_free_full(list, g_object_unref) }
    var results: [(attributes: [String: String], secret: String?)] = []
    var node = list
    while let current = node {
      node = current.pointee.next
      let item = current.pointee.data.assumingMemoryBound(to: SecretItem.self)
      if secret_item_get_locked(item) != 0 { throw lockedOr(nil) }
      let table = secret_item_get_attributes(item)
      defer { g_hash_table_unref(table) }
      var secret: String?
      if loadSecrets, let value = secret_item_get_secret(item) {
        defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
        secret = try text(of: value)
      }
      results.append((dictionary(from: table), secret))
    }
    return results
  }

  /// After a miss or a refusal without an error: `.locked` if a collection
  /// is locked (libsecret reports locked as "nothing there"), else `fallback`.
  func lockedOr(_ fallback: KeyringError?) -> KeyringError {
    if let label = try? lockedCollectionLabel() { return .locked(label) }
    return fallback ?? KeyringError(.failed, "The Secret Service reported a locked item but no locked collection.")
  }

  /// The label of a locked collection, nil when none is locked.
  func lockedCollectionLabel() throws -> String? {
    let service = try connect()
    defer { g_object_unref(service) }
    var error: UnsafeMutablePointer<GError>?
    _ = secret_service_load_collections_sync(service, cancellable.pointer, &error)
    try check(error)
    let list = secret_service_get_collections(service)
    defer { g_list_free_full(list, g_object_unref) }
    var node = list
    while let current = node {
      node = current.pointee.next
      let collection = current.pointee.data.assumingMemoryBound(to: SecretCollection.self)
      if secret_collection_get_locked(collection) != 0 { return label(of: collection) }
    }
    return nil
  }

  // MARK: Probe

  /// What `odr doctor` reports, step by step; stops at the first failure.
  func probe() -> KeyringProbe {
    var probe = KeyringProbe()
    var error: UnsafeMutablePointer<GError>?
    guard let bus = g_bus_get_sync(G_BUS_TYPE_SESSION, cancellable.pointer, &error) else {
      probe.failure = classify(error, connecting: true) as? KeyringError
      g_clear_error(&error)
      return probe
    }
    g_object_unref(UnsafeMutableRawPointer(bus))
    probe.sessionBus = true
    let service: UnsafeMutablePointer<SecretService>
    do { service = try connect() } catch {
      probe.failure = error as? KeyringError
      return probe
    }
    defer { g_object_unref(service) }
    probe.provider = true
    do {
      guard let collection = try defaultCollection(of: service) else {
        probe.failure = .noDefaultCollection()
        return probe
      }
      probe.defaultCollection = collection.label
      probe.locked = collection.locked
      if collection.locked { probe.failure = .locked(collection.label) }
    } catch {
      probe.failure = error as? KeyringError
    }
    return probe
  }

  /// The collection the `default` alias names, or nil when there is none.
  private func defaultCollection(of service: UnsafeMutablePointer<SecretService>) throws -> (label: String, locked: Bool)? {
    var error: UnsafeMutablePointer<GError>?
    let collection = secret_collection_for_alias_sync(service, "default", SECRET_COLLECTION_NONE, cancellable.pointer, &error)
    try check(error)
    guard let collection else { return nil }
    defer { g_object_unref(collection) }
    return (label(of: collection), secret_collection_get_locked(collection) != 0)
  }

  // MARK: Helpers

  /// The shared SecretService proxy with its encrypted session open (a new
  /// reference). Opening the session up front gives the same 11 D-Bus calls
  /// as `secret-tool lookup`; opening it lazily costs one GetNameOwner more.
  private func connect() throws -> UnsafeMutablePointer<SecretService> {
    var error: UnsafeMutablePointer<GError>?
    guard let service = secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, cancellable.pointer, &error) else {
      defer { g_clear_error(&error) }
      throw classify(error, connecting: true)
    }
    return service
  }

  private func check(_ error: UnsafeMutablePointer<GError>?) throws {
    guard let error else { return }
    defer { g_error_free(error) }
    throw classify(error, connecting: false)
  }

  /// Maps a GError to KeyringError (or CancellationError when the task was
  /// cancelled). `connecting`: the error came from reaching the provider.
  private func classify(_ error: UnsafeMutablePointer<GError>?, connecting: Bool) -> any Error {
    guard let error else { return KeyringError(.failed, "The Secret Service call failed without saying why.") }
    let domain = error.pointee.domain
    let code = error.pointee.code
    let text = error.pointee.message.map { String(cString: $0) }
    if domain == g_io_error_quark() && code == Int32(G_IO_ERROR_CANCELLED.rawValue) {
      return cancellable.firedReason == .task ? CancellationError() : KeyringError.timeout(deadline)
    }
    if domain == g_io_error_quark() && code == Int32(G_IO_ERROR_TIMED_OUT.rawValue) {
      return KeyringError.timeout(deadline)
    }
    if domain == g_dbus_error_quark() {
      switch code {
      case Int32(G_DBUS_ERROR_SERVICE_UNKNOWN.rawValue), Int32(G_DBUS_ERROR_NAME_HAS_NO_OWNER.rawValue):
        return KeyringError.noProvider(text)
      case Int32(G_DBUS_ERROR_NO_REPLY.rawValue), Int32(G_DBUS_ERROR_TIMEOUT.rawValue), Int32(G_DBUS_ERROR_TIMED_OUT.rawValue):
        return KeyringError.timeout(deadline)
      default: break
      }
    }
    if domain == secret_error_get_quark() {
      switch code {
      case Int32(SECRET_ERROR_IS_LOCKED.rawValue): return lockedOr(nil)
      case Int32(SECRET_ERROR_NO_SUCH_OBJECT.rawValue): return KeyringError.noDefaultCollection(text)
      default: break
      }
    }
    if connecting {
      // Not reaching the bus at all (no address, no socket, refused) fails
      // in GIO or the D-Bus auth layer before any provider is asked.
      var busError: UnsafeMutablePointer<GError>?
      if let bus = g_bus_get_sync(G_BUS_TYPE_SESSION, cancellable.pointer, &busError) {
        g_object_unref(UnsafeMutableRawPointer(bus))
        return KeyringError.noProvider(text)
      }
      g_clear_error(&busError)
      return KeyringError.noSessionBus(text)
    }
    return KeyringError(.failed, "The Secret Service call failed.", underlying: text)
  }

  private func text(of value: OpaquePointer) throws -> String {
    var length: gsize = 0
    guard let bytes = secret_value_get(value, &length) else { return "" }
    let buffer = UnsafeBufferPointer(start: UnsafeRawPointer(bytes).assumingMemoryBound(to: UInt8.self), count: Int(length))
    guard let text = String(validating: buffer, as: UTF8.self) else {
      throw KeyringError(.failed, "A stored value is not UTF-8 text; odr only handles text keys.")
    }
    return text
  }

  private func label(of collection: UnsafeMutablePointer<SecretCollection>) -> String {
    guard let label = secret_collection_get_label(collection) else { return "default" }
    defer { g_free(label) }
    return String(cString: label)
  }

  private func dictionary(from table: OpaquePointer?) -> [String: String] {
    var result: [String: String] = [:]
    var iterator = GHashTableIter()
    g_hash_table_iter_init(&iterator, table)
    var key: gpointer?
    var value: gpointer?
    while g_hash_table_iter_next(&iterator, &key, &value) != 0 {
      guard let key, let value else { continue }
      result[String(cString: key.assumingMemoryBound(to: CChar.self))] = String(cString: value.assumingMemoryBound(to: CChar.self))
    }
    return result
  }

  private func withAttributeTable<R>(_ attributes: [String: String], _ body: (OpaquePointer) -> R) -> R {
    let table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)!
    defer { g_hash_table_unref(table) }
    for (key, value) in attributes {
      g_hash_table_insert(table, g_strdup(key), g_strdup(value))
    }
    return body(table)
  }
}

extension Duration {
  var nanoseconds: Int64 {
    components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
  }
}
