import XCTest
@testable import LunetCore

/// The events' flow between libcurl and a consumer (BodyFlow), as a value: no curl, no loop.
final class BodyFlowTests: XCTestCase {
    private func chunk(_ n: Int) -> ByteBuffer { ByteBuffer(copying: [UInt8](repeating: 7, count: n), count: n) }

    func testOneBatchAtATimeInOrderAndTheLoopToldOncePerBatch() {
        var f = BodyFlow<Int>(limit: 1000)
        XCTAssertEqual(f.chunkArrives(), .take)
        XCTAssertTrue(f.take(chunk(10)), "the first news tells the loop")
        XCTAssertFalse(f.take(chunk(20)), "more news before the hand-over: told already")
        XCTAssertEqual(f.handOver()?.map(\.count), [10, 20], "both, in order")
        XCTAssertNil(f.handOver(), "nothing more while the consumer is busy")
        XCTAssertFalse(f.take(chunk(30)), "news while busy: the loop is told when the consumer is through")
        XCTAssertNil(f.handOver(), "still busy")
        XCTAssertEqual(f.consumerFinished()?.next, .notifyLoop)
        XCTAssertEqual(f.handOver()?.map(\.count), [30])
        XCTAssertEqual(f.consumerFinished()?.next, .nothing)
        XCTAssertNil(f.consumerFinished(), "a second 'through' for one batch does nothing")
    }

    func testProgressAloneIsNewsWithAnEmptyBatch() {
        var f = BodyFlow<Int>(limit: 1000)
        XCTAssertTrue(f.noteNews())
        XCTAssertEqual(f.handOver()?.count, 0)
    }

    func testPausedOnceLimitBytesAreHeldUnpausedWhenTheConsumerIsThrough() {
        var f = BodyFlow<Int>(limit: 100)
        _ = f.take(chunk(60))
        _ = f.handOver()                               // the consumer holds 60
        XCTAssertEqual(f.chunkArrives(), .take)
        _ = f.take(chunk(50))                          // 110 held: past the limit
        XCTAssertEqual(f.heldBytes, 110)
        XCTAssertEqual(f.chunkArrives(), .pause)
        XCTAssertTrue(f.paused)
        let done = f.consumerFinished()
        XCTAssertEqual(done?.unpause, true, "libcurl may go on")
        XCTAssertEqual(f.heldBytes, 50, "only what waits is held now")
        XCTAssertFalse(f.paused)
        XCTAssertEqual(f.chunkArrives(), .take)
    }

    func testATransferThatEndsWhileTheConsumerIsBusyCompletesAfterIt() {
        var f = BodyFlow<Int>(limit: 1000)
        _ = f.take(chunk(5))
        _ = f.handOver()
        let first = f.transferEnds(42)
        guard case .wait = first.ending else { return XCTFail("the consumer is busy: wait") }
        XCTAssertTrue(first.firstWait)
        XCTAssertFalse(f.transferEnds(42).firstWait, "listed once")
        XCTAssertNil(f.completionDue(), "not while busy")
        XCTAssertEqual(f.consumerFinished()?.next, .completeLater)
        XCTAssertEqual(f.completionDue(), 42)
    }

    func testNewsLeftWhenTheTransferEndedIsHandedOverBeforeCompleting() {
        var f = BodyFlow<Int>(limit: 1000)
        _ = f.take(chunk(1))
        _ = f.handOver()
        _ = f.take(chunk(2))                           // arrives while busy
        _ = f.transferEnds(7)
        XCTAssertEqual(f.consumerFinished()?.next, .completeLater)
        XCTAssertEqual(f.handOver()?.map(\.count), [2], "the later turn hands over what is left first")
        XCTAssertNil(f.completionDue(), "busy again with it")
        XCTAssertEqual(f.consumerFinished()?.next, .completeLater)
        XCTAssertEqual(f.completionDue(), 7)
    }

    func testAFreeConsumerCompletesAtOnceAndClearDropsEverything() {
        var f = BodyFlow<Int>(limit: 1000)
        guard case .complete(let v) = f.transferEnds(3).ending else { return XCTFail("nothing busy: complete now") }
        XCTAssertEqual(v, 3)
        _ = f.take(chunk(9))
        f.clear()
        XCTAssertEqual([f.heldBytes, f.waitingBytes], [0, 0])
        XCTAssertFalse(f.hasNews)
    }
}
