import Foundation
import ODRBase
import ODRHTTP
import ODRResources
import ODRTesting
import Synchronization
import Testing
import ODRCatalog

/// A request's state and progress observations, and cancel(), against the
/// loopback server.
@Suite(.tags(.timed), .enabled(if: TestSelection.timed), .timeLimit(.minutes(2))) struct RequestObservationTests {
  @Test func statesAndProgressAreObservedUntilCancelled() async throws {
    try await HTTPDownloadTests.Fixture.run { fixture in
      let request = try ResourceRequest(tags: ["Big"], catalog: try await fixture.load())
      let states = request.states()
      let progress = request.progressUpdates()
      let seenStates = Task { await states.prefix(3).reduce(into: [ResourceRequest.State]()) { $0.append($1) } }
      let seenProgress = Task { await progress.reduce(into: [ResourceRequest.LoadProgress]()) { $0.append($1) } }
      try await request.beginAccessing()
      #expect(await seenStates.value == [.notRequested, .loading, .available])
      progress.cancel()  // the token ends the observation
      let updates = await seenProgress.value
      #expect(updates.first?.bytesCompleted == 0)
      #expect(updates.last == .init(bytesCompleted: fixture.big.size + 5, bytesTotal: fixture.big.size + 5, filesCompleted: 2, filesTotal: 2))
      #expect(zip(updates, updates.dropFirst()).allSatisfy { $0.bytesCompleted <= $1.bytesCompleted })
    }
  }

  @Test func cancelStopsASlowLoadAndTheStateSaysSo() async throws {
    try await HTTPDownloadTests.Fixture.run { fixture in
      fixture.server.setFault(.slow(chunk: 64 << 10, pause: .milliseconds(50)), forPathEndingWith: fixture.big.sha256)
      let request = try ResourceRequest(tags: ["Big"], catalog: try await fixture.load())
      let loading = Task { try await request.beginAccessing() }
      for await update in request.progressUpdates() where update.bytesCompleted > 0 { break }
      #expect(request.state == .loading)
      let start = ContinuousClock.now
      request.cancel()
      await #expect(throws: CancellationError.self) { try await loading.value }
      #expect(ContinuousClock.now - start < .seconds(3))
      #expect(request.state == .failed("Cancelled."))
      #expect(!fixture.installed().contains(fixture.big.sha256))
      // Not sticky: a new begin loads it.
      fixture.server.setFault(nil, forPathEndingWith: fixture.big.sha256)
      try await request.beginAccessing()
      #expect(request.state == .available)
    }
  }

  @Test func anObservationEndsWithItsTask() async throws {
    try await HTTPDownloadTests.Fixture.run { fixture in
      let request = try ResourceRequest(tags: ["Small"], catalog: try await fixture.load())
      // A gate: the observer has its first state, so it is iterating.
      let (iterating, open) = AsyncStream<Void>.makeStream()
      let observer = Task { for await _ in request.states() { open.yield() } }
      for await _ in iterating { break }
      observer.cancel()
      await observer.value  // returns: the sequence ended with its task
      try await request.beginAccessing()
      #expect(request.state == .available)
    }
  }
}
