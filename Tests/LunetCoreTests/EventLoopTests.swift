import Foundation
import XCTest
@testable import LunetCore

/// The loop on its own: timers fire in deadline order and a cancelled one never does, work
/// handed in from another thread runs on the loop's thread, answers made without the network
/// arrive on a later turn, and a closing host drops what is pending.
final class EventLoopTests: XCTestCase {
    func testTimersFireInDeadlineOrderNotTheOrderAdded() {
        let loop = EventLoop()
        var order: [String] = []
        loop.addTimer(after: 0.03) { order.append("third") }
        loop.addTimer(after: 0.01) { order.append("first") }
        loop.addTimer(after: 0.02) { order.append("second") }
        loop.run { false }
        XCTAssertEqual(order, ["first", "second", "third"])
        XCTAssertEqual(loop.pendingTimers, 0)
    }

    /// (Each gets its own deadline from the clock; ties in the heap are TimerHeapTests' matter.)
    func testZeroDelayTimersFireInTheOrderAdded() {
        let loop = EventLoop()
        var order: [Int] = []
        for i in 0..<5 { loop.addTimer(after: 0) { order.append(i) } }
        loop.run { false }
        XCTAssertEqual(order, [0, 1, 2, 3, 4])
    }

    func testACancelledTimerNeverFiresAndNoLongerKeepsTheLoopBusy() {
        let loop = EventLoop()
        var fired: [String] = []
        let id = loop.addTimer(after: 0.01) { fired.append("cancelled") }
        loop.addTimer(after: 0.02) { fired.append("kept") }
        loop.cancelTimer(id)
        XCTAssertEqual(loop.pendingTimers, 1)
        loop.run { false }
        XCTAssertEqual(fired, ["kept"])
        XCTAssertTrue(loop.isIdle)
    }

    func testATimerAddedByATimerFiresOnALaterTurn() {
        let loop = EventLoop()
        var order: [String] = []
        loop.addTimer(after: 0) {
            order.append("outer")
            loop.addTimer(after: 0) { order.append("inner") }
        }
        loop.runOnce(wait: false)
        XCTAssertEqual(order, ["outer"], "the timer it added is not due in the same pass")
        loop.run { false }
        XCTAssertEqual(order, ["outer", "inner"])
    }

    func testWorkSubmittedFromAnotherThreadRunsOnTheLoopsThread() {
        let loop = EventLoop()
        let loopThread = pthread_self()
        let seen = UnsafeSendable(ThreadsSeen())
        loop.holds += 1                              // keep turning until the work has come
        let box = UnsafeSendable(loop)
        let thread = Thread {
            box.value.submit {
                // Runs on the loop: touching the loop's state here is what submit is for.
                seen.value.onLoopThread = pthread_equal(pthread_self(), loopThread) != 0
                box.value.holds -= 1
            }
        }
        thread.start()
        loop.run { false }
        XCTAssertEqual(seen.value.onLoopThread, true)
        XCTAssertEqual(loop.holds, 0, "the other thread's work ran, and ended the hold")
        XCTAssertTrue(loop.isIdle)
    }

    func testSubmittedWorkMakesTheLoopBusyUntilItRuns() {
        let loop = EventLoop()
        XCTAssertTrue(loop.isIdle)
        let seen = UnsafeSendable(ThreadsSeen())
        loop.submit { seen.value.onLoopThread = true }
        XCTAssertFalse(loop.isIdle, "handed-in work is pending")
        loop.run { false }
        XCTAssertEqual(seen.value.onLoopThread, true, "it ran")
    }

    func testAnswersWithoutTheNetworkArriveOnALaterTurn() {
        let loop = EventLoop()
        let request = HTTPRequest(url: "http://127.0.0.1:1/")
        var events: [String] = []
        let failed = loop.fail(request, LunetError(.argument, "bad")) { result in
            if case .failure(let e) = result { events.append("fail \(e.kind)") }
        }
        let response = cacheResponse(200, request: request)
        let served = loop.succeed(request, response) { result in
            if case .success(let r) = result { events.append("succeed \(r.status)") }
        }
        events.append("returned")
        XCTAssertEqual(failed.state, .running)
        XCTAssertEqual(served.state, .running)
        loop.run { false }
        XCTAssertEqual(events, ["returned", "fail argument", "succeed 200"])
        XCTAssertEqual(failed.state, .finished)
        XCTAssertEqual(served.state, .finished)
    }

    func testCancelAllDropsPendingTimersAndTellsTheirOwners() {
        let loop = EventLoop()
        var outcomes: [Bool] = []
        loop.addTimer(after: 3600, firedOrDropped: { outcomes.append($0) })
        var plainFired = false
        loop.addTimer(after: 3600) { plainFired = true }
        loop.cancelAll()
        XCTAssertEqual(outcomes, [false], "dropped, unfired")
        XCTAssertFalse(plainFired)
        XCTAssertEqual(loop.pendingTimers, 0)
        XCTAssertTrue(loop.isIdle)
    }

    func testRunUntilStopsWhenTheConditionHoldsWithWorkStillPending() {
        let loop = EventLoop()
        var count = 0
        loop.addTimer(after: 0) { count += 1 }
        loop.addTimer(after: 3600) { count += 100 }
        loop.run { count == 1 }
        XCTAssertEqual(count, 1)
        XCTAssertEqual(loop.pendingTimers, 1)
        XCTAssertFalse(loop.isIdle)
    }
}

final class ThreadsSeen { var onLoopThread: Bool? }

/// Carries a loop-owned object into a closure made on another thread, which only hands it
/// back to the loop (submit): the loop is what makes that safe.
struct UnsafeSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
