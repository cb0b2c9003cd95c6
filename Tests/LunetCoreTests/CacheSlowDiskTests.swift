import Foundation
import XCTest
@testable import LunetCore

/// The disk tier's writes happen on a thread of their own (CacheDiskWriter): a slow disk must not
/// stall the loop. Here the disk is as slow as the test wants: each operation waits in the
/// writer's test hook until the test lets it go (at most 10 s), and transfers of another session,
/// and of the cached one, must all complete while the writes wait.
final class CacheSlowDiskTests: XCTestCase {
    func testASlowDiskTierStallsNoTransfer() throws {
        let dir = cacheTemporaryDirectory("slow-disk")
        let cache = HTTPCache(HTTPCache.Configuration(directory: dir, syncWrites: true))
        let gate = Gate()
        cache.diskWriter?.beforeEachForTests = { gate.waitOpen(atMost: 10) }
        let loop = EventLoop()
        var cached = Session.Configuration()
        cached.cache = cache
        let withCache = Session(loop: loop, configuration: cached)
        let plain = Session(loop: loop)
        let bin = httpbinURL()

        // Five storable responses (five disk writes, held at the gate) and, beside them, forty
        // requests of both sessions: those must all complete while the disk still waits.
        var stored = 0, done = 0
        var writesWaitingWhenDone = -1
        for i in 0..<5 {
            withCache.send(HTTPRequest(url: bin + "/cache/600?slow=\(i)-\(UUID().uuidString)")) { r in
                if case .success(let response) = r, response.status == 200 { stored += 1 }
            }
        }
        for i in 0..<40 {
            let session = i % 2 == 0 ? plain : withCache
            var request = HTTPRequest(url: bin + "/get?n=\(i)")
            request.cachePolicy = .noStore
            session.send(request) { r in
                guard case .success(let response) = r, response.status == 200 else { return }
                done += 1
                if done == 40 { writesWaitingWhenDone = cache.diskWriter?.outstanding ?? 0 }
            }
        }
        loop.run { stored == 5 && done == 40 }
        XCTAssertEqual([stored, done], [5, 40])
        XCTAssertGreaterThan(writesWaitingWhenDone, 0, "the requests waited for the disk: nothing was left to write when they were done")
        gate.open()

        // Every entry reaches the disk, in order, once the writer is through; a new cache reads them.
        cache.flush()
        XCTAssertEqual(cache.stats().diskEntries, 5)
        let again = HTTPCache(HTTPCache.Configuration(directory: dir))
        XCTAssertEqual(again.stats().diskEntries, 5)
    }

    func testAReadOfAKeyWithAWriteQueuedWaitsForItAndARemovalIsNeverOvertaken() {
        let dir = cacheTemporaryDirectory("slow-disk-order")
        let cache = HTTPCache(HTTPCache.Configuration(memoryLimit: 0, directory: dir))
        cache.diskWriter?.beforeEachForTests = { usleep(100_000) }
        let url = "https://example.com/ordered"
        let req = cacheRequest(url)
        _ = cache.store(request: req, response: cacheResponse(200, [("Cache-Control", "max-age=1000")], body: "v1", request: req, date: cacheT0),
                        requestTime: cacheT0, responseTime: cacheT0)
        // No memory tier: the lookup reads the disk, after the queued write.
        XCTAssertEqual(cache.lookup(req, now: cacheT0 + 1).stored?.entry.body.string, "v1")
        // A POST to it invalidates it (queued); a lookup right after must not find it on disk.
        let post = cacheRequest(url, method: "POST")
        _ = cache.store(request: post, response: cacheResponse(200, [], body: "", request: post, date: cacheT0), requestTime: cacheT0, responseTime: cacheT0)
        XCTAssertEqual(cache.lookup(req, now: cacheT0 + 1).kind, "miss")
    }
}

extension CacheSlowDiskTests {
    /// Issue 46, item 17: a hit read from disk never waits for the writer. Here the writer holds
    /// the tier's mutex and the index lock through a 2 s pause inside a write (as a slow rename
    /// would); a read of another key, made meanwhile, must come at once.
    func testAHitReadFromDiskDoesNotWaitForAWriteInProgress() {
        let dir = cacheTemporaryDirectory("slow-disk-read")
        let cache = HTTPCache(HTTPCache.Configuration(memoryLimit: 0, directory: dir))
        let a = cacheRequest("https://example.com/already-stored")
        _ = cache.store(request: a, response: cacheResponse(200, [("Cache-Control", "max-age=1000")], body: "A", request: a, date: cacheT0),
                        requestTime: cacheT0, responseTime: cacheT0)
        cache.flush()
        let inside = DispatchSemaphore(value: 0)
        cache.disk?.insideWriteForTests = {
            inside.signal()
            usleep(2_000_000)
        }
        let b = cacheRequest("https://example.com/being-written")
        _ = cache.store(request: b, response: cacheResponse(200, [("Cache-Control", "max-age=1000")], body: "B", request: b, date: cacheT0),
                        requestTime: cacheT0, responseTime: cacheT0)
        XCTAssertEqual(inside.wait(timeout: .now() + 10), .success, "the writer reached its pause")
        let t0 = Date()
        XCTAssertEqual(cache.lookup(a, now: cacheT0 + 1).stored?.entry.body.string, "A")
        let took = Date().timeIntervalSince(t0)
        XCTAssertLessThan(took, 0.5, "the read waited for the writer: \(took) s")
        cache.disk?.insideWriteForTests = nil
        cache.flush()
    }
}

/// A door the writer's thread waits at until the test opens it (at most `atMost` seconds).
private final class Gate: @unchecked Sendable {
    private let condition = NSCondition()
    private var isOpen = false
    func waitOpen(atMost seconds: Double) {
        condition.lock()
        let deadline = Date().addingTimeInterval(seconds)
        while !isOpen && condition.wait(until: deadline) {}
        condition.unlock()
    }
    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }
}
