internal import CLibsecret
import Dispatch
import ODRBase
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// Every call into libsecret and GLib lives in this file. No GLib type or C
// pointer leaves it: callers get Swift values and KeyringError.

/// Runs libsecret's blocking `…_sync` calls one at a time on a dedicated
/// serial queue (off the cooperative pool), each under a deadline and
/// cancellable by its task through a `GCancellable`.
final class Libsecret: Sendable {
  static let shared = Libsecret()
  private let queue = DispatchQueue(label: "odr.libsecret", qos: .userInitiated)

  private init() {}

  /// Runs `body` on the libsecret queue. The call is cancelled when
  /// `deadline` passes (→ `.timeout`) or the task is cancelled
  /// (→ `CancellationError`). `askingToUnlock`: whether a locked
  /// collection may be unlocked through the desktop's prompt.
  func perform<T: Sendable>(deadline: Duration, askingToUnlock: Bool = Session.desktopCanPrompt,
                            _ body: @escaping @Sendable (Session) throws -> T) async throws -> T {
    try LibsecretLibrary.load()
    let cancellable = Cancellable(deadline: deadline)
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        queue.async {
          continuation.resume(with: Result { try Self.run(deadline: deadline, askingToUnlock: askingToUnlock, cancellable: cancellable, body) })
        }
      }
    } onCancel: {
      cancellable.cancel(.task)
    }
  }

  /// `perform` on the calling thread, which it blocks: for a process that
  /// makes one keyring call and has nothing else to do (`odr get`), it
  /// saves two thread hops. Never call it from the cooperative pool.
  func performBlocking<T>(deadline: Duration, askingToUnlock: Bool = Session.desktopCanPrompt, _ body: (Session) throws -> T) throws -> T {
    try LibsecretLibrary.load()
    return try Self.run(deadline: deadline, askingToUnlock: askingToUnlock, cancellable: Cancellable(deadline: deadline), body)
  }

  /// Runs `body`; the libsecret call in progress fails with `.timeout`
  /// when the cancellable's deadline passes.
  private static func run<T>(deadline: Duration, askingToUnlock: Bool, cancellable: Cancellable, _ body: (Session) throws -> T) throws -> T {
    defer { cancellable.disarm() }
    let session = Session(cancellable: cancellable, deadline: deadline)
    do { return try body(session) } catch let error as KeyringError where error.code == .timeout {
      // A provider may prompt by itself for a locked item a call touches;
      // a prompt left unanswered ends in the deadline too.
      let check = Session(cancellable: Cancellable(deadline: .milliseconds(500)), deadline: .milliseconds(500))
      // a failed check leaves the unanswered prompt's own error
      if dropping(.isTheAnswer, { try check.lockedCollection() }) != nil { throw KeyringError.promptUnanswered(deadline) }
      throw error
    } catch let error as KeyringError where error.code == .locked && askingToUnlock {
      // A desktop session: ask it to unlock (it prompts the user), once,
      // within the same deadline (--timeout).
      guard let path = error.lockedPath else { throw error }
      let unlocked: Bool
      do { unlocked = try session.unlock(path) } catch let failure as KeyringError where failure.code == .timeout {
        throw KeyringError.promptUnanswered(deadline)
      } catch is KeyringError {
        throw error  // the provider cannot prompt: the collection stays locked
      }
      // libsecret dismisses a prompt whose call is cancelled and reports it unanswered.
      if cancellable.firedReason == .deadline { throw KeyringError.promptUnanswered(deadline) }
      guard unlocked else { throw KeyringError.promptDismissed(error.lockedLabel ?? "default") }
      return try body(session)
    }
  }
}

/// A `GCancellable` that remembers why it was fired.
final class Cancellable: @unchecked Sendable {
  enum Reason: UInt8 { case none, deadline, task }
  // g_cancellable_cancel is thread-safe; the pointer never changes.
  let pointer: UnsafeMutablePointer<GCancellable>
  private let reason = Atomic<UInt8>(Reason.none.rawValue)

  // Set once in init, before the cancellable is shared.
  private var timer: DispatchWorkItem?

  /// A cancellable that fires by itself when `deadline` has passed.
  init(deadline: Duration) {
    pointer = lib.g_cancellable_new()!
    let timer = DispatchWorkItem { [weak self] in self?.cancel(.deadline) }
    DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(deadline.nanoseconds)), execute: timer)
    self.timer = timer
  }

  deinit {
    timer?.cancel()
    lib.g_object_unref(pointer)
  }

  /// Stops the deadline timer: the call is over.
  func disarm() { timer?.cancel() }

  func cancel(_ why: Reason) {
    if reason.compareExchange(expected: Reason.none.rawValue, desired: why.rawValue, ordering: .relaxed).exchanged {
      lib.g_cancellable_cancel(pointer)
    }
  }

  var firedReason: Reason { Reason(rawValue: reason.load(ordering: .relaxed)) ?? .none }
}

/// The replies of ``Session``'s pipelined D-Bus calls, filled in on the
/// calling thread's private main context.
private final class PipelinedReplies {
  var variants: [OpaquePointer?]
  var errors: [UnsafeMutablePointer<GError>?]
  var pending: Int
  init(_ count: Int) {
    variants = Array(repeating: nil, count: count)
    errors = Array(repeating: nil, count: count)
    pending = count
  }
}

/// One pipelined call: where its reply goes.
private final class PipelinedCall {
  let replies: PipelinedReplies
  let index: Int
  init(_ replies: PipelinedReplies, _ index: Int) { self.replies = replies; self.index = index }
}

/// One call's view of libsecret: attribute tables in, Swift values out.
struct Session {
  let cancellable: Cancellable
  let deadline: Duration

  // MARK: Items

  // MARK: One item per key (ItemLayout)

  /// The items holding key `name` of `service` in any layout
  /// (`ItemLayout.searches(service:name:)`): D-Bus paths, unlocked and locked.
  func itemPaths(named name: String, service: String) throws -> (unlocked: [String], locked: [String]) {
    try itemPaths(named: [name], service: service)[0]
  }

  /// ``itemPaths(named:service:)`` of each of `names`, every layout's
  /// search for every name sent at once: one round trip, not one per search.
  private func itemPaths(named names: [String], service: String) throws -> [(unlocked: [String], locked: [String])] {
    let secretService = try connect()
    defer { lib.g_object_unref(secretService) }
    let proxy = UnsafeMutableRawPointer(secretService).assumingMemoryBound(to: GDBusProxy.self)
    let searches = names.map { ItemLayout.searches(service: service, name: $0) }
    let calls = searches.joined().map { search in
      let entries: [OpaquePointer?] = search.sorted { $0.key < $1.key }.map { lib.g_variant_new_dict_entry(lib.g_variant_new_string($0.key), lib.g_variant_new_string($0.value)) }
      let entryType = lib.g_variant_type_new("{ss}")
      defer { lib.g_variant_type_free(entryType) }
      var dictionary: [OpaquePointer?] = [entries.withUnsafeBufferPointer { lib.g_variant_new_array(entryType, $0.baseAddress, gsize($0.count)) }]
      return (path: "/org/freedesktop/secrets", interface: "org.freedesktop.Secret.Service", method: "SearchItems",
              arguments: lib.g_variant_new_tuple(&dictionary, 1)!)
    }
    var found = try pipelined(calls, proxy: proxy) { reply in (Self.objectPaths(reply, 0), Self.objectPaths(reply, 1)) }[...]
    return searches.map { layouts in
      var unlocked: [String] = []
      var locked: [String] = []
      for (open, closed) in found.prefix(layouts.count) {
        for path in open where !unlocked.contains(path) { unlocked.append(path) }
        for path in closed where !locked.contains(path) { locked.append(path) }
      }
      found = found.dropFirst(layouts.count)
      return (unlocked, locked)
    }
  }

  /// The object paths in child `index` of a reply (an `ao`).
  private static func objectPaths(_ reply: OpaquePointer, _ index: Int) -> [String] {
    guard index < lib.g_variant_n_children(reply) else { return [] }
    let array = lib.g_variant_get_child_value(reply, gsize(index))
    defer { lib.g_variant_unref(array) }
    guard String(cString: lib.g_variant_get_type_string(array)!) == "ao" else { return [] }
    return (0..<lib.g_variant_n_children(array)).map { child in
      let path = lib.g_variant_get_child_value(array, child)
      defer { lib.g_variant_unref(path) }
      return String(cString: lib.g_variant_get_string(path, nil)!)
    }
  }

  /// The value of key `name` of `service`, read from its item in any
  /// layout (of several, `ItemLayout.preferred(_:)`'s); nil when no
  /// unlocked item holds it, `.locked` when a locked one does or (with
  /// `checkingLock`) the default collection is locked.
  func value(named name: String, service: String, checkingLock: Bool = true) throws -> String? {
    try values(named: [(name, checkingLock)], service: service)[0]
  }

  /// ``value(named:service:checkingLock:)`` of each key, read together:
  /// every search in one round trip, every secret in one GetSecrets (`odr
  /// get` and the provider read a key and the import journal so, at the
  /// cost of about one lookup). A lock is reported for the first key, in
  /// order, that meets one.
  func values(named keys: [(name: String, checkingLock: Bool)], service: String) throws -> [String?] {
    let found = try itemPaths(named: keys.map(\.name), service: service)
    var chosen: [String?] = []
    for (key, paths) in zip(keys, found) {
      guard !paths.unlocked.isEmpty else {
        if paths.locked.isEmpty {
          guard key.checkingLock, try lockedCollection() != nil else {
            chosen.append(nil)
            continue
          }
        }
        throw lockedOr(nil, lockedItems: paths.locked)
      }
      chosen.append(try preferred(paths.unlocked))
    }
    let paths = chosen.compactMap { $0 }
    let secrets = paths.isEmpty ? [:] : try secrets(of: paths)
    return try zip(keys, chosen).map { key, path in
      guard let path else { return nil }
      guard let value = secrets[path] else {
        throw KeyringError(.failed, "The Secret Service found the item of \(key.name) but sent no secret for it. Try again; if it persists, the provider is at fault (`odr doctor` names it).")
      }
      return value
    }
  }

  /// Of items holding one key, the one to read and keep.
  private func preferred(_ paths: [String]) throws -> String {
    guard paths.count > 1 else { return paths[0] }
    let service = try connect()
    defer { lib.g_object_unref(service) }
    let proxy = UnsafeMutableRawPointer(service).assumingMemoryBound(to: GDBusProxy.self)
    let attributes = try itemAttributes(paths, proxy: proxy)
    let modified = try paths.map { path in
      let value = try property("Modified", of: path, interface: "org.freedesktop.Secret.Item", proxy: proxy)
      defer { lib.g_variant_unref(value) }
      return UInt64(lib.g_variant_get_uint64(value))
    }
    let items: [(attributes: [String: String], modified: UInt64)] = zip(attributes, modified).map { ($0, $1) }
    return paths[ItemLayout.preferred(items) ?? 0]
  }

  /// Stores `secret` as the one item of key `name` with `attributes`
  /// (`ItemLayout.attributes(service:name:extra:)`). The first unlocked
  /// item that already holds the key in this layout gets the secret in
  /// place (Item.SetSecret); with none, a new item goes to the default
  /// collection. Every other item
  /// holding the key is then deleted: one item per key, and no moment
  /// without one.
  ///
  /// Never CreateItem with `replace` over an existing item, nor a changed
  /// Attributes property: KeePassXC 2.7 never completes the prompt of a
  /// CreateItem that replaces an item and refuses to set Attributes.
  func store(_ attributes: [String: String], name: String, service serviceName: String, label: String, secret: String) throws {
    let service = try connect()
    defer { lib.g_object_unref(service) }
    let value: OpaquePointer = secret.withCString { lib.secret_value_new($0, gssize(secret.utf8.count), "text/plain")! }
    defer { lib.secret_value_unref(UnsafeMutableRawPointer(value)) }
    let paths = try itemPaths(named: name, service: serviceName).unlocked
    var kept: String?
    for path in paths where try laidOut(path, as: attributes, in: service) {
      kept = path
      break
    }
    if let kept {
      var error: UnsafeMutablePointer<GError>?
      try withItem(kept, in: service) { item in
        _ = lib.secret_item_set_secret_sync(item, value, cancellable.pointer, &error)
        try check(error)
      }
    } else {
      kept = try create(attributes, label: label, value: value, in: service)
    }
    for path in paths where path != kept { try delete(path, in: service) }
  }

  /// Whether the item at `path` carries `attributes` (beside its
  /// provider's own, and no other of odr's).
  private func laidOut(_ path: String, as attributes: [String: String], in service: UnsafeMutablePointer<SecretService>) throws -> Bool {
    let proxy = UnsafeMutableRawPointer(service).assumingMemoryBound(to: GDBusProxy.self)
    let existing = try itemAttributes([path], proxy: proxy)[0]
    return ItemLayout.merged(existing, with: attributes) == existing
  }

  /// A new item in the default collection (CreateItem without `replace`:
  /// no item is overwritten behind odr's back); returns its path.
  private func create(_ attributes: [String: String], label: String, value: OpaquePointer,
                      in service: UnsafeMutablePointer<SecretService>) throws -> String {
    var error: UnsafeMutablePointer<GError>?
    guard let collection = lib.secret_collection_for_alias_sync(service, "default", SECRET_COLLECTION_NONE, cancellable.pointer, &error) else {
      try check(error)
      throw KeyringError.noDefaultCollection()
    }
    defer { lib.g_object_unref(collection) }
    let item = withAttributeTable(attributes) {
      lib.secret_item_create_sync(collection, nil, $0, label, value, SECRET_ITEM_CREATE_NONE, cancellable.pointer, &error)
    }
    try check(error)
    guard let item else { throw lockedOr(KeyringError(.failed, "The Secret Service refused to store the key.")) }
    defer { lib.g_object_unref(item) }
    return String(cString: lib.g_dbus_proxy_get_object_path(UnsafeMutableRawPointer(item).assumingMemoryBound(to: GDBusProxy.self))!)
  }

  /// Brings the items of `service` to odr's layout: each key's value (of
  /// several items, ``preferred(_:)``'s) in one item with `ItemLayout`'s
  /// attributes (a catalog token keeps its origins), written as ``store``
  /// writes. Returns how many keys changed.
  func bringToLayout(service serviceName: String) throws -> Int {
    var byName: [String: [Session.FoundItem]] = [:]
    for item in try search(["service": serviceName], loadSecrets: false) {
      if let name = ItemLayout.name(of: item.attributes) { byName[name, default: []].append(item) }
    }
    var changed = 0
    for (name, items) in byName {
      let origins = items.compactMap { $0.attributes[SecretServiceStore.catalogOriginsAttribute] }.first
      let layout = ItemLayout.attributes(service: serviceName, name: name,
                                         extra: origins.map { [SecretServiceStore.catalogOriginsAttribute: $0] } ?? [:])
      guard items.count > 1 || ItemLayout.merged(items[0].attributes, with: layout) != items[0].attributes else { continue }
      let keep = try preferred(items.map(\.path))
      guard let secret = try secrets(of: [keep])[keep] else { continue }  // deleted meanwhile: nothing to keep
      try store(layout, name: name, service: serviceName, label: "odr \(serviceName) \(name)", secret: secret)
      changed += 1
    }
    return changed
  }

  /// Deletes every unlocked item of key `name` of `service`, in any
  /// layout. False when there was none.
  func delete(named name: String, service serviceName: String) throws -> Bool {
    let service = try connect()
    defer { lib.g_object_unref(service) }
    let paths = try itemPaths(named: name, service: serviceName)
    for path in paths.unlocked { try delete(path, in: service) }
    if paths.unlocked.isEmpty, !paths.locked.isEmpty { throw lockedOr(nil, lockedItems: paths.locked) }
    return !paths.unlocked.isEmpty
  }

  private func delete(_ path: String, in service: UnsafeMutablePointer<SecretService>) throws {
    var error: UnsafeMutablePointer<GError>?
    try withItem(path, in: service) { item in
      _ = lib.secret_item_delete_sync(item, cancellable.pointer, &error)
      try check(error)
    }
  }

  /// Runs `body` with libsecret's proxy of the item at `path`.
  private func withItem<T>(_ path: String, in service: UnsafeMutablePointer<SecretService>,
                           _ body: (UnsafeMutablePointer<SecretItem>) throws -> T) throws -> T {
    var error: UnsafeMutablePointer<GError>?
    guard let item = lib.secret_item_new_for_dbus_path_sync(service, path, SECRET_ITEM_NONE, cancellable.pointer, &error) else {
      try check(error)
      throw KeyringError(.failed, "The Secret Service did not open the item at \(path).")
    }
    defer { lib.g_object_unref(item) }
    return try body(item)
  }

  /// The secrets of the items at `paths` (one GetSecrets); an item the
  /// provider sent none for is absent.
  private func secrets(of paths: [String]) throws -> [String: String] {
    let service = try connect()
    defer { lib.g_object_unref(service) }
    var error: UnsafeMutablePointer<GError>?
    let copies = paths.map { strdup($0) }
    defer { for copy in copies { free(copy) } }
    var pointers: [UnsafePointer<gchar>?] = copies.map { UnsafePointer($0) } + [nil]
    let table = pointers.withUnsafeMutableBufferPointer {
      lib.secret_service_get_secrets_for_dbus_paths_sync(service, $0.baseAddress, cancellable.pointer, &error)
    }
    try check(error)
    guard let table else { return [:] }
    defer { lib.g_hash_table_unref(table) }
    var result: [String: String] = [:]
    for path in paths {
      if let value = lib.g_hash_table_lookup(table, path) { result[path] = try text(of: OpaquePointer(value)) }
    }
    return result
  }

  /// Items matching `attributes`: each item's attributes, and its secret
  /// when `loadSecrets`. Throws `.locked` if a matching item is locked.
  ///
  /// Works on D-Bus paths: one SearchItems, one Properties.Get per item and
  /// one GetSecrets for all, instead of libsecret's item proxies (a GetAll
  /// and a match rule each), which made 500 items take seconds.
  func search(_ attributes: [String: String], loadSecrets: Bool) throws -> [FoundItem] {
    // Another client may delete an item between SearchItems and the reads
    // of its attributes and secret, which then fail ("No such interface …
    // on object at path …") or come back short. Searching again no longer
    // finds it. A failure after a search that found other items than the
    // last one (the service is changing: a client deleting one item after
    // another) is not counted; three failures over the same items are a
    // real failure.
    var failures = 0
    var changes = 0
    var lastFound: Set<String>?
    while true {
      do {
        return try searchOnce(attributes, loadSecrets: loadSecrets)
      } catch let failed as ReadsFailed {
        if let lastFound, lastFound != failed.found, changes < 100 {
          changes += 1
        } else {
          failures += 1
          guard failures < 3 else { throw failed.error }
        }
        lastFound = failed.found
      }
    }
  }

  /// An item a search found: its D-Bus path, attributes and (when asked
  /// for) secret.
  struct FoundItem {
    let path: String
    let attributes: [String: String]
    var secret: String?
  }

  /// A read after a search failed: perhaps the item was deleted meanwhile.
  private struct ReadsFailed: Error {
    let error: any Error
    /// The items the search had found.
    let found: Set<String>
  }

  private func searchOnce(_ attributes: [String: String], loadSecrets: Bool) throws -> [FoundItem] {
    let service = try connect()
    defer { lib.g_object_unref(service) }
    return try withSearchPaths(attributes, in: service) { unlocked, locked in
      if locked?.pointee != nil {
        // naming the locked collection is best effort; the lock is reported either way
        throw (dropping(.bestEffort) { try lockedCollection(holding: strings(locked)) }).flatMap { $0.map { KeyringError.locked($0.label, path: $0.path) } }
          ?? KeyringError(.failed, "The Secret Service reported a locked item but no locked collection.")
      }
      let paths = strings(unlocked)
      // Nothing found may mean "all locked": say so rather than "empty".
      guard !paths.isEmpty else {
        if let found = try lockedCollection() { throw KeyringError.locked(found.label, path: found.path) }
        return []
      }
      let proxy = UnsafeMutableRawPointer(service).assumingMemoryBound(to: GDBusProxy.self)
      var results: [FoundItem]
      do { results = try zip(paths, itemAttributes(paths, proxy: proxy)).map { FoundItem(path: $0, attributes: $1) } } catch { throw ReadsFailed(error: error, found: Set(paths)) }
      // Items the search found must carry what was searched for.
      if results.contains(where: { item in attributes.contains { item.attributes[$0.key] != $0.value } }) {
        throw KeyringError(.failed, "The Secret Service found items whose attributes do not match the search; the provider does not follow the Secret Service API (`odr doctor` names it), so odr reads nothing from it.")
      }
      guard loadSecrets else { return results }
      let secrets: [String: String]
      do { secrets = try self.secrets(of: paths) } catch { throw ReadsFailed(error: error, found: Set(paths)) }
      for index in results.indices { results[index].secret = secrets[results[index].path] }
      // A secret left out: the item was deleted meanwhile (searching again
      // tells), or the provider answered short — never a silently shorter list.
      let missing = results.count { $0.secret == nil }
      if missing > 0 {
        throw ReadsFailed(error: KeyringError(.failed, "The Secret Service found \(paths.count) items but sent the secrets of only \(paths.count - missing); odr reads all of them or none. Try again; if it persists, the Secret Service provider is at fault (`odr doctor` names it)."), found: Set(paths))
      }
      return results
    }
  }

  /// Sends every call at once and collects the replies on a private main
  /// context, so the cost is the daemon's work, not one round trip per
  /// call; `read` turns each reply (a new reference, released after) into
  /// a value. The first failure is thrown.
  private func pipelined<T>(_ calls: [(path: String, interface: String, method: String, arguments: OpaquePointer)],
                            proxy: UnsafeMutablePointer<GDBusProxy>, read: (OpaquePointer) throws -> T) throws -> [T] {
    let context = lib.g_main_context_new()
    lib.g_main_context_push_thread_default(context)
    defer {
      lib.g_main_context_pop_thread_default(context)
      lib.g_main_context_unref(context)
    }
    let replies = PipelinedReplies(calls.count)
    defer {
      for variant in replies.variants { if let variant { lib.g_variant_unref(variant) } }
      for error in replies.errors { if let error { lib.g_error_free(error) } }
    }
    let connection = lib.g_dbus_proxy_get_connection(proxy)
    for (index, call) in calls.enumerated() {
      let data = Unmanaged.passRetained(PipelinedCall(replies, index)).toOpaque()
      lib.g_dbus_connection_call(connection, lib.g_dbus_proxy_get_name(proxy), call.path, call.interface, call.method,
                             call.arguments, nil, G_DBUS_CALL_FLAGS_NONE, -1, cancellable.pointer, { source, result, data in
        let call = Unmanaged<PipelinedCall>.fromOpaque(data!).takeRetainedValue()
        var error: UnsafeMutablePointer<GError>?
        call.replies.variants[call.index] = lib.g_dbus_connection_call_finish(OpaquePointer(source), result, &error)
        call.replies.errors[call.index] = error
        call.replies.pending -= 1
      }, data)
    }
    while replies.pending > 0 { _ = lib.g_main_context_iteration(context, 1) }
    if let index = replies.errors.firstIndex(where: { $0 != nil }) {
      let error = replies.errors[index]
      replies.errors[index] = nil
      try check(error)
    }
    return try replies.variants.map { reply in
      guard let reply else { throw KeyringError(.failed, "The Secret Service sent no reply.") }
      return try read(reply)
    }
  }

  /// The attributes of many items: all Properties.Get calls are sent at
  /// once and their replies collected on a private main context, so the
  /// cost is the daemon's work, not one round trip per item.
  private func itemAttributes(_ paths: [String], proxy: UnsafeMutablePointer<GDBusProxy>) throws -> [[String: String]] {
    let calls = paths.map { path in
      var arguments: [OpaquePointer?] = [lib.g_variant_new_string("org.freedesktop.Secret.Item"), lib.g_variant_new_string("Attributes")]
      return (path: path, interface: "org.freedesktop.DBus.Properties", method: "Get", arguments: lib.g_variant_new_tuple(&arguments, 2)!)
    }
    return try pipelined(calls, proxy: proxy) { reply in
      let boxed = lib.g_variant_get_child_value(reply, 0)
      defer { lib.g_variant_unref(boxed) }
      let dictionary = lib.g_variant_get_variant(boxed)
      defer { lib.g_variant_unref(dictionary) }
      // A provider's bug must not become a GLib assertion in odr.
      let type = String(cString: lib.g_variant_get_type_string(dictionary)!)
      guard type == "a{ss}" else {
        throw KeyringError(.failed, "The Secret Service sent item attributes of type \(type), not a{ss}; it does not follow the Secret Service API.")
      }
      var result: [String: String] = [:]
      for index in 0..<lib.g_variant_n_children(dictionary) {
        let entry = lib.g_variant_get_child_value(dictionary, index)
        let key = lib.g_variant_get_child_value(entry, 0)
        let value = lib.g_variant_get_child_value(entry, 1)
        result[String(cString: lib.g_variant_get_string(key, nil)!)] = String(cString: lib.g_variant_get_string(value, nil)!)
        lib.g_variant_unref(value)
        lib.g_variant_unref(key)
        lib.g_variant_unref(entry)
      }
      return result
    }
  }

  private func strings(_ array: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?) -> [String] {
    guard let array else { return [] }
    var result: [String] = []
    var index = 0
    while let string = array[index] {
      result.append(String(cString: string))
      index += 1
    }
    return result
  }

  /// After a miss or a refusal without an error: `.locked` if a collection
  /// that would answer is locked (libsecret reports locked as "nothing
  /// there"), else `fallback`. With `attributes`, the collections holding
  /// locked items that match them count too.
  func lockedOr(_ fallback: KeyringError?, attributes: [String: String]? = nil, lockedItems: [String] = []) -> KeyringError {
    // naming the locked collection is best effort; the failure is reported either way
    let lockedItems = lockedItems + (attributes.flatMap { attributes in dropping(.bestEffort) { try lockedItemPaths(attributes) } } ?? [])
    if let found = dropping(.isTheAnswer, { try lockedCollection(holding: lockedItems) }) { return .locked(found.label, path: found.path) }
    return fallback ?? KeyringError(.failed, "The Secret Service reported a locked item but no locked collection.")
  }

  /// The locked items matching `attributes` (D-Bus paths).
  func lockedItemPaths(_ attributes: [String: String]) throws -> [String] {
    let service = try connect()
    defer { lib.g_object_unref(service) }
    return try withSearchPaths(attributes, in: service) { _, locked in strings(locked) }
  }

  /// Runs `body` with the D-Bus paths of the unlocked and the locked items
  /// matching `attributes` (NULL-terminated arrays, freed afterwards).
  private func withSearchPaths<T>(_ attributes: [String: String], in service: UnsafeMutablePointer<SecretService>,
                                  _ body: (UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?,
                                           UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?) throws -> T) throws -> T {
    var error: UnsafeMutablePointer<GError>?
    var unlocked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
    var locked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
    _ = withAttributeTable(attributes) {
      lib.secret_service_search_for_dbus_paths_sync(service, nil, $0, cancellable.pointer, &unlocked, &locked, &error)
    }
    defer {
      lib.g_strfreev(unlocked)
      lib.g_strfreev(locked)
    }
    try check(error)
    return try body(unlocked, locked)
  }

  /// The label of a locked collection among those that would answer — the
  /// one the `default` alias names (where new items go) and those holding
  /// `lockedItems` — or nil when none is locked. Another locked collection
  /// is none of odr's business. Reads D-Bus properties directly: no
  /// collection or item proxies, so it stays cheap however many items exist.
  func lockedCollection(holding lockedItems: [String] = []) throws -> (label: String, path: String)? {
    let service = try connect()
    defer { lib.g_object_unref(service) }
    let proxy = UnsafeMutableRawPointer(service).assumingMemoryBound(to: GDBusProxy.self)
    var paths: [String] = []
    if let alias = try defaultAliasPath(proxy: proxy), alias != "/" { paths.append(alias) }
    for item in lockedItems {
      let collection = String(item[..<(item.lastIndex(of: "/") ?? item.endIndex)])
      if !paths.contains(collection) { paths.append(collection) }
    }
    for path in paths {
      let locked = try property("Locked", of: path, interface: "org.freedesktop.Secret.Collection", proxy: proxy)
      defer { lib.g_variant_unref(locked) }
      guard lib.g_variant_get_boolean(locked) != 0 else { continue }
      let label = try property("Label", of: path, interface: "org.freedesktop.Secret.Collection", proxy: proxy)
      defer { lib.g_variant_unref(label) }
      let text = String(cString: lib.g_variant_get_string(label, nil)!)
      return (text.isEmpty ? "default" : text, path)
    }
    return nil
  }

  /// True when this process's graphical session can show the Secret
  /// Service's unlock prompt (a display to prompt on); elsewhere odr never
  /// asks. The default of ``SecretServiceStore``'s `asksToUnlock`.
  static var desktopCanPrompt: Bool {
    ["DISPLAY", "WAYLAND_DISPLAY"].contains { (name: String) in getenv(name).map { $0.pointee != 0 } ?? false }
  }

  /// Asks the provider to unlock the collection at `path`; the desktop
  /// prompts for the password. True when it was unlocked.
  func unlock(_ path: String) throws -> Bool {
    let service = try connect()
    defer { lib.g_object_unref(service) }
    var error: UnsafeMutablePointer<GError>?
    var unlocked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
    defer { lib.g_strfreev(unlocked) }
    let count = path.withCString { pointer -> Int32 in
      var paths: [UnsafePointer<gchar>?] = [pointer, nil]
      return paths.withUnsafeMutableBufferPointer {
        lib.secret_service_unlock_dbus_paths_sync(service, $0.baseAddress, cancellable.pointer, &unlocked, &error)
      }
    }
    try check(error)
    return count > 0
  }

  /// The object path the `default` alias names ("/" when none).
  private func defaultAliasPath(proxy: UnsafeMutablePointer<GDBusProxy>) throws -> String? {
    var error: UnsafeMutablePointer<GError>?
    var arguments: [OpaquePointer?] = [lib.g_variant_new_string("default")]
    let reply = lib.g_dbus_connection_call_sync(lib.g_dbus_proxy_get_connection(proxy), lib.g_dbus_proxy_get_name(proxy), "/org/freedesktop/secrets",
                                            "org.freedesktop.Secret.Service", "ReadAlias", lib.g_variant_new_tuple(&arguments, 1),
                                            nil, G_DBUS_CALL_FLAGS_NONE, -1, cancellable.pointer, &error)
    try check(error)
    guard let reply else { return nil }
    defer { lib.g_variant_unref(reply) }
    let path = lib.g_variant_get_child_value(reply, 0)
    defer { lib.g_variant_unref(path) }
    return String(cString: lib.g_variant_get_string(path, nil)!)
  }

  /// One D-Bus property of an object of the provider (a new reference).
  private func property(_ name: String, of path: String, interface: String, proxy: UnsafeMutablePointer<GDBusProxy>) throws -> OpaquePointer {
    var error: UnsafeMutablePointer<GError>?
    var arguments: [OpaquePointer?] = [lib.g_variant_new_string(interface), lib.g_variant_new_string(name)]
    let reply = lib.g_dbus_connection_call_sync(lib.g_dbus_proxy_get_connection(proxy), lib.g_dbus_proxy_get_name(proxy), path,
                                            "org.freedesktop.DBus.Properties", "Get", lib.g_variant_new_tuple(&arguments, 2),
                                            nil, G_DBUS_CALL_FLAGS_NONE, -1, cancellable.pointer, &error)
    try check(error)
    guard let reply else { throw KeyringError(.failed, "The Secret Service sent no value for \(name).") }
    defer { lib.g_variant_unref(reply) }
    let boxed = lib.g_variant_get_child_value(reply, 0)
    defer { lib.g_variant_unref(boxed) }
    return lib.g_variant_get_variant(boxed)!
  }

  // MARK: Probe

  /// What `odr doctor` reports, step by step; stops at the first failure.
  func probe() -> KeyringProbe {
    var probe = KeyringProbe()
    var error: UnsafeMutablePointer<GError>?
    guard let bus = lib.g_bus_get_sync(G_BUS_TYPE_SESSION, cancellable.pointer, &error) else {
      probe.failure = classify(error, connecting: true) as? KeyringError
      lib.g_clear_error(&error)
      return probe
    }
    defer { lib.g_object_unref(UnsafeMutableRawPointer(bus)) }
    probe.sessionBus = true
    let service: UnsafeMutablePointer<SecretService>
    do { service = try connect() } catch {
      probe.failure = error as? KeyringError
      return probe
    }
    defer { lib.g_object_unref(service) }
    probe.provider = true
    probe.providerProgram = providerProgram(on: bus)
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

  /// The program that owns `org.freedesktop.secrets` (its executable's
  /// name, or its script's for an interpreter), with its pid; nil when the
  /// bus does not say (a sandbox, another user's process).
  private func providerProgram(on bus: OpaquePointer) -> String? {
    guard let pid = Self.askBus(bus, "GetConnectionUnixProcessID", timeout: -1, cancellable: cancellable.pointer, read: lib.g_variant_get_uint32)
    else { return nil }
    return ProviderProcess.name(pid: pid).map { "\($0) (pid \(pid))" }
  }

  /// Asks the bus daemon `method` about the name `org.freedesktop.secrets`
  /// and reads its one answer with `read`; nil when the bus does not answer.
  private static func askBus<T>(_ bus: OpaquePointer, _ method: String, timeout: Int32,
                                cancellable: UnsafeMutablePointer<GCancellable>?, read: (OpaquePointer) -> T) -> T? {
    var arguments: [OpaquePointer?] = [lib.g_variant_new_string("org.freedesktop.secrets")]
    guard let reply = lib.g_dbus_connection_call_sync(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                                  method, lib.g_variant_new_tuple(&arguments, 1), nil,
                                                  G_DBUS_CALL_FLAGS_NONE, timeout, cancellable, nil)
    else { return nil }
    defer { lib.g_variant_unref(reply) }
    let value = lib.g_variant_get_child_value(reply, 0)!
    defer { lib.g_variant_unref(value) }
    return read(value)
  }

  /// The collection the `default` alias names, or nil when there is none.
  private func defaultCollection(of service: UnsafeMutablePointer<SecretService>) throws -> (label: String, locked: Bool)? {
    var error: UnsafeMutablePointer<GError>?
    let collection = lib.secret_collection_for_alias_sync(service, "default", SECRET_COLLECTION_NONE, cancellable.pointer, &error)
    try check(error)
    guard let collection else { return nil }
    defer { lib.g_object_unref(collection) }
    return (label(of: collection), lib.secret_collection_get_locked(collection) != 0)
  }

  // MARK: Helpers

  /// The shared SecretService proxy with its encrypted session open (a new
  /// reference). Opening the session up front gives the same 11 D-Bus calls
  /// as `secret-tool lookup`; opening it lazily costs one GetNameOwner more.
  private func connect() throws -> UnsafeMutablePointer<SecretService> {
    var error: UnsafeMutablePointer<GError>?
    guard let service = lib.secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, cancellable.pointer, &error) else {
      defer { lib.g_clear_error(&error) }
      throw classify(error, connecting: true)
    }
    return service
  }

  private func check(_ error: UnsafeMutablePointer<GError>?) throws {
    guard let error else { return }
    defer { lib.g_error_free(error) }
    throw classify(error, connecting: false)
  }

  /// Maps a GError to KeyringError (or CancellationError when the task was
  /// cancelled). `connecting`: the error came from reaching the provider.
  private func classify(_ error: UnsafeMutablePointer<GError>?, connecting: Bool) -> any Error {
    guard let error else { return KeyringError(.failed, "The Secret Service call failed without saying why.") }
    let domain = error.pointee.domain
    let code = error.pointee.code
    let text = GLibError(error.pointee)
    if domain == lib.g_io_error_quark() && code == Int32(G_IO_ERROR_CANCELLED.rawValue) {
      return cancellable.firedReason == .task ? CancellationError() : KeyringError.timeout(deadline)
    }
    if domain == lib.g_io_error_quark() && code == Int32(G_IO_ERROR_TIMED_OUT.rawValue) {
      return KeyringError.timeout(deadline)
    }
    if domain == lib.g_dbus_error_quark() {
      switch code {
      case Int32(G_DBUS_ERROR_SERVICE_UNKNOWN.rawValue), Int32(G_DBUS_ERROR_NAME_HAS_NO_OWNER.rawValue):
        return KeyringError.noProvider(text)
      case Int32(G_DBUS_ERROR_NO_REPLY.rawValue):
        // The provider left the bus without answering: it exited, or
        // another one took its name (which would not know odr's session).
        return providerIsGone() ? KeyringError.providerGone(text) : KeyringError.providerChanged(text)
      case Int32(G_DBUS_ERROR_TIMEOUT.rawValue), Int32(G_DBUS_ERROR_TIMED_OUT.rawValue):
        return KeyringError.timeout(deadline)
      default: break
      }
    }
    if let remote = lib.g_dbus_error_get_remote_error(error) {
      defer { lib.g_free(remote) }
      // A provider that never opened odr's session: it was restarted or
      // replaced on the bus since.
      if String(cString: remote) == "org.freedesktop.Secret.Error.NoSession" { return KeyringError.providerChanged(text) }
    }
    if domain == lib.secret_error_get_quark() {
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
      if let bus = lib.g_bus_get_sync(G_BUS_TYPE_SESSION, cancellable.pointer, &busError) {
        lib.g_object_unref(UnsafeMutableRawPointer(bus))
        return KeyringError.noProvider(text)
      }
      lib.g_clear_error(&busError)
      return KeyringError.noSessionBus(text)
    }
    // libsecret words some failures of a vanished provider its own way
    // ("No such secret item at path …").
    if providerIsGone() { return KeyringError.providerGone(text) }
    return KeyringError(.failed, "The Secret Service call failed.", underlying: text)
  }

  /// True when nothing owns `org.freedesktop.secrets` now.
  private func providerIsGone() -> Bool {
    guard let bus = lib.g_bus_get_sync(G_BUS_TYPE_SESSION, nil, nil) else { return true }
    defer { lib.g_object_unref(UnsafeMutableRawPointer(bus)) }
    // The session's cancellable may have fired already: this asks on its own, for at most 1 s.
    guard let owned = Self.askBus(bus, "NameHasOwner", timeout: 1000, cancellable: nil, read: lib.g_variant_get_boolean) else { return false }
    return owned == 0
  }

  private func text(of value: OpaquePointer) throws -> String {
    var length: gsize = 0
    guard let bytes = lib.secret_value_get(value, &length) else { return "" }
    let buffer = UnsafeBufferPointer(start: UnsafeRawPointer(bytes).assumingMemoryBound(to: UInt8.self), count: Int(length))
    guard let text = String(validating: buffer, as: UTF8.self) else {
      throw KeyringError(.failed, "A stored value is not UTF-8 text; odr only handles text keys.")
    }
    return text
  }

  private func label(of collection: UnsafeMutablePointer<SecretCollection>) -> String {
    guard let label = lib.secret_collection_get_label(collection) else { return "default" }
    defer { lib.g_free(label) }
    return String(cString: label)
  }

  private func withAttributeTable<R>(_ attributes: [String: String], _ body: (OpaquePointer) -> R) -> R {
    let table = lib.g_hash_table_new_full(lib.g_str_hash, lib.g_str_equal, lib.g_free, lib.g_free)!
    defer { lib.g_hash_table_unref(table) }
    for (key, value) in attributes {
      _ = lib.g_hash_table_insert(table, lib.g_strdup(key), lib.g_strdup(value))
    }
    return body(table)
  }
}

extension Duration {
  var nanoseconds: Int64 {
    components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
  }
}
