import XCTest
@testable import LunetCore

/// Background timers (net.on_change's poll) fire while the loop turns for other work but do not
/// keep it turning: run(until:) returns when only they are left.
final class BackgroundTimerTests: XCTestCase {
    func testOnlyBackgroundTimersLeftIsIdle() {
        let loop = EventLoop()
        var fired = 0
        loop.addBackgroundTimer(after: 3600, firedOrDropped: { if $0 { fired += 1 } })
        XCTAssertTrue(loop.isIdle, "a background timer alone keeps nothing running")
        loop.run(until: { false })               // returns at once: idle
        XCTAssertEqual(fired, 0)
    }

    func testBackgroundTimerFiresWhileOtherWorkRuns() {
        let loop = EventLoop()
        var order: [String] = []
        loop.addBackgroundTimer(after: 0.01, firedOrDropped: { if $0 { order.append("background") } })
        loop.addTimer(after: 0.05) { order.append("work") }
        XCTAssertFalse(loop.isIdle)
        loop.run(until: { false })
        XCTAssertEqual(order, ["background", "work"])
        XCTAssertTrue(loop.isIdle)
    }

    func testCancelledBackgroundTimerLeavesTheCountRight() {
        let loop = EventLoop()
        let id = loop.addBackgroundTimer(after: 3600, firedOrDropped: { _ in })
        loop.cancelTimer(id)
        loop.addTimer(after: 3600) {}
        XCTAssertFalse(loop.isIdle, "a plain timer still keeps the loop running")
    }
}
