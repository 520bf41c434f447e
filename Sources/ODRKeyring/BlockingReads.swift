/// A store that can read on the calling thread, blocking it: for a process
/// whose only work is one read (`odr get`), which spares it the hops to the
/// concurrency pool. Never call these from async code.
public protocol BlockingReads: SecretStore {
  /// ``SecretStore/valueAndJournal(for:)`` on the calling thread.
  func valueAndJournalBlocking(for name: String) throws -> (value: String?, journal: String?)
  /// ``SecretStore/names()`` on the calling thread.
  func namesBlocking() throws -> [String]
}
