import XCTest
@testable import LunetCore

final class TimerHeapTests: XCTestCase {
    func testFiresInDeadlineOrderAndTiesInInsertionOrder() {
        var heap = TimerHeap<String>()
        heap.add(deadline: 3, "c")
        heap.add(deadline: 1, "a1")
        heap.add(deadline: 2, "b")
        heap.add(deadline: 1, "a2")
        var fired: [String] = []
        while let e = heap.popDue(now: 10) { fired.append(e.payload) }
        XCTAssertEqual(fired, ["a1", "a2", "b", "c"])
        XCTAssertTrue(heap.isEmpty)
    }

    func testOnlyDueEntriesPop() {
        var heap = TimerHeap<Int>()
        heap.add(deadline: 5, 5)
        heap.add(deadline: 1, 1)
        XCTAssertEqual(heap.popDue(now: 2)?.payload, 1)
        XCTAssertNil(heap.popDue(now: 2))
        XCTAssertEqual(heap.nextDeadline(), 5)
    }

    func testCancelledEntriesNeverFireAndDoNotCount() {
        var heap = TimerHeap<Int>()
        let a = heap.add(deadline: 1, 1)
        heap.add(deadline: 2, 2)
        heap.cancel(a)
        XCTAssertEqual(heap.count, 1)
        XCTAssertEqual(heap.nextDeadline(), 2)
        XCTAssertEqual(heap.popDue(now: 10)?.payload, 2)
        XCTAssertTrue(heap.isEmpty)
    }

    func testManyRandomDeadlinesComeOutSorted() {
        var heap = TimerHeap<Double>()
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 { let d = Double.random(in: 0..<1000, using: &generator); heap.add(deadline: d, d) }
        var last = -1.0
        var n = 0
        while let e = heap.popDue(now: .infinity) { XCTAssertGreaterThanOrEqual(e.deadline, last); last = e.deadline; n += 1 }
        XCTAssertEqual(n, 2000)
    }

    func testRemoveAllReturnsLiveEntries() {
        var heap = TimerHeap<Int>()
        let x = heap.add(deadline: 1, 1)
        heap.add(deadline: 2, 2)
        heap.cancel(x)
        XCTAssertEqual(heap.removeAll().map(\.payload), [2])
        XCTAssertTrue(heap.isEmpty)
    }
}
