@testable import ODRTesting
import Testing

/// The tests' bound on concurrent children: a request for every slot waits
/// for an idle machine without holding anyone back, then holds everyone back.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(1))) struct ChildSlotsTests {
  @Test func aRequestForEverySlotHoldsNoOneBackWhileItWaits() async {
    let slots = ChildSlots(limit: 2)
    await slots.acquire(all: false)  // a long child runs
    let everything = Task { await slots.acquire(all: true) }
    while await slots.queued.all == 0 { await Task.yield() }
    // A later request for one slot takes the free one at once (with the
    // waiting request in front of it, this await never returned).
    await slots.acquire(all: false)
    await slots.release(all: false)
    #expect(await slots.queued == (0, 1))
    await slots.release(all: false)  // the machine is idle: the waiting request gets it
    await everything.value
    #expect(await slots.queued == (0, 0))
    // While it holds every slot, a request for one waits.
    let one = Task { await slots.acquire(all: false) }
    while await slots.queued.one == 0 { await Task.yield() }
    await slots.release(all: true)
    await one.value
    #expect(await slots.queued == (0, 0))
  }

  @Test func requestsForOneSlotGoFirstWhenSlotsFree() async {
    let slots = ChildSlots(limit: 1)
    await slots.acquire(all: false)
    let everything = Task { await slots.acquire(all: true) }
    while await slots.queued.all == 0 { await Task.yield() }
    let one = Task { await slots.acquire(all: false) }
    while await slots.queued.one == 0 { await Task.yield() }
    // The freed slot goes to the request for one; every slot only after it.
    await slots.release(all: false)
    await one.value
    #expect(await slots.queued == (0, 1))
    await slots.release(all: false)
    await everything.value
    #expect(await slots.queued == (0, 0))
  }
}
