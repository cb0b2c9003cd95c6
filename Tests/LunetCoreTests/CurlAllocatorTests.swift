import Foundation
import XCTest
import CLunetCurl
import CLunetLinux
@testable import LunetCore

/// libcurl's memory functions (curl_allocator.c): each thread keeps freed blocks for its next
/// allocations of their size. Every block must still be a block of the size asked for, with the
/// bytes it should have, and what a thread keeps must be bounded and given back when it ends.
final class CurlAllocatorTests: XCTestCase {
    var keepsBlocks: Bool { lunet_curl_mem_keeps_blocks() == 1 }

    func kept() -> (blocks: Int, bytes: Int) {
        var blocks = 0, bytes = 0
        lunet_curl_mem_counts(&blocks, &bytes)
        return (blocks, bytes)
    }

    // Under AddressSanitizer nothing is kept (so that a use of a freed block is still caught):
    // the tests of what is kept check there that nothing is.

    func testAFreedBlockServesTheNextRequestOfItsSize() {
        for size in [1, 16, 17, 100, 1000, 1024, 1500, 16385, 60000] {
            let p = lunet_curl_mem_malloc(size)!
            lunet_curl_mem_free(p)
            guard keepsBlocks else {
                XCTAssertEqual(kept().blocks, 0, "nothing is kept under AddressSanitizer")
                continue
            }
            let q = lunet_curl_mem_malloc(size)!
            XCTAssertEqual(q, p, "a block of \(size) bytes freed is the next one of that size")
            lunet_curl_mem_free(q)
        }
    }

    func testSizesFreedOnceDoNotTakeEveryLargeListForGood() {
        // On a thread of its own (an empty cache): twenty large sizes freed once each (more than
        // the eight lists), then the size libcurl frees with every request: it is still kept.
        let keptIt = KeptBytes(), handedBack = KeptBytes(), usable = KeptBytes()
        onFreshThread {
            let once = (0..<20).map { lunet_curl_mem_malloc(2000 + $0 * 160)! }
            once.forEach { lunet_curl_mem_free($0) }
            let p = lunet_curl_mem_malloc(16385)!
            usable.value = lunet_malloc_usable_size(p)
            lunet_curl_mem_free(p)
            // Taken from what the thread keeps, the next one of that size lowers its bytes by
            // the block's size (glibc could hand the same address back itself).
            var blocks = 0, before = 0, after = 0
            lunet_curl_mem_counts(&blocks, &before)
            let q = lunet_curl_mem_malloc(16385)!
            lunet_curl_mem_counts(&blocks, &after)
            keptIt.value = before - after
            handedBack.value = q == p ? 1 : 0
            lunet_curl_mem_free(q)
        }
        guard keepsBlocks else { return XCTAssertEqual(keptIt.value, 0, "nothing is kept under AddressSanitizer") }
        XCTAssertEqual(keptIt.value, usable.value, "a 16 KB block freed after them was kept")
        XCTAssertEqual(handedBack.value, 1, "and handed back")
    }

    /// Runs `body` on a new thread and waits for it to end.
    func onFreshThread(_ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        let thread = Thread { body(); done.signal() }
        thread.start()
        done.wait()
        while !thread.isFinished { usleep(1000) }
    }

    func testEveryBlockHasTheRoomAskedFor() {
        // Blocks freed at one size serve other sizes of their class: each must still be as large
        // as the request it is given for.
        var blocks: [UnsafeMutableRawPointer] = []
        for size in stride(from: 1, through: 70000, by: 37) {
            let p = lunet_curl_mem_malloc(size)!
            XCTAssertGreaterThanOrEqual(lunet_malloc_usable_size(p), size)
            memset(p, 0xAB, size)
            blocks.append(p)
            if blocks.count == 8 { blocks.forEach { lunet_curl_mem_free($0) }; blocks.removeAll() }
        }
        blocks.forEach { lunet_curl_mem_free($0) }
    }

    func testCallocZeroesAKeptBlock() {
        for size in [24, 200, 752, 1496, 5000] {
            let dirty = lunet_curl_mem_malloc(size)!
            memset(dirty, 0xFF, size)
            lunet_curl_mem_free(dirty)
            let p = lunet_curl_mem_calloc(1, size)!.assumingMemoryBound(to: UInt8.self)
            XCTAssertTrue((0..<size).allSatisfy { p[$0] == 0 }, "calloc(\(size)) is all zeroes")
            lunet_curl_mem_free(p)
        }
        XCTAssertNil(lunet_curl_mem_calloc(Int.max, 4), "a size that overflows is refused")
    }

    func testReallocKeepsTheBytesAsTheBlockGrowsAndShrinks() {
        // libcurl's request buffer grows 32 -> 64 -> ... by realloc; past 64 KB glibc's realloc.
        var size = 10
        var p = lunet_curl_mem_malloc(size)!
        for i in 0..<size { p.storeBytes(of: UInt8(i & 0xFF), toByteOffset: i, as: UInt8.self) }
        for next in [32, 64, 128, 256, 1000, 1025, 4096, 16385, 65536, 70000, 200_000, 100, 3] {
            p = lunet_curl_mem_realloc(p, next)!
            let same = min(size, next)
            XCTAssertTrue((0..<same).allSatisfy { p.load(fromByteOffset: $0, as: UInt8.self) == UInt8($0 & 0xFF) },
                          "the first \(same) bytes survive a realloc to \(next)")
            XCTAssertGreaterThanOrEqual(lunet_malloc_usable_size(p), next)
            for i in same..<next { p.storeBytes(of: UInt8(i & 0xFF), toByteOffset: i, as: UInt8.self) }
            size = next
        }
        lunet_curl_mem_free(p)
        let s = lunet_curl_mem_strdup("lunet")!
        XCTAssertEqual(String(cString: s), "lunet")
        lunet_curl_mem_free(s)
    }

    func testWhatAThreadKeepsIsBounded() {
        // Ten thousand blocks of one size, then of every size up to 64 KB, all freed at once.
        var blocks = (0..<10_000).map { _ in lunet_curl_mem_malloc(64)! }
        blocks.forEach { lunet_curl_mem_free($0) }
        XCTAssertLessThanOrEqual(kept().blocks, 128 + 8 * 128 + 65, "at most 128 of a size")
        blocks = stride(from: 1, through: 65536, by: 13).map { lunet_curl_mem_malloc($0)! }
        blocks.forEach { lunet_curl_mem_free($0) }
        XCTAssertLessThanOrEqual(kept().bytes, 512 * 1024, "at most 512 KB in all")
        if keepsBlocks { XCTAssertGreaterThan(kept().bytes, 0) } else { XCTAssertEqual(kept().bytes, 0, "nothing under AddressSanitizer") }
    }

    func testAThreadGivesItsBlocksBackWhenItEnds() {
        // Twenty threads each keep up to 512 KB: kept for good, that is ~10 MB still allocated.
        let before = lunet_malloc_in_use()
        for _ in 0..<20 {
            let keptThere = KeptBytes()
            onFreshThread {
                // 128 blocks of each small size: more than the 512 KB a thread keeps.
                let blocks = (1...64).flatMap { k in (0..<128).map { _ in lunet_curl_mem_malloc(k * 16)! } }
                blocks.forEach { lunet_curl_mem_free($0) }
                var n = 0, bytes = 0
                lunet_curl_mem_counts(&n, &bytes)
                keptThere.value = bytes
            }
            guard keepsBlocks else { XCTAssertEqual(keptThere.value, 0, "nothing under AddressSanitizer"); continue }
            XCTAssertGreaterThan(keptThere.value, 448 * 1024, "the thread kept blocks")
        }
        // (AddressSanitizer's allocator does not count through mallinfo2: nothing to compare.)
        guard keepsBlocks else { return }
        let grown = Int(lunet_malloc_in_use()) - Int(before)
        XCTAssertLessThan(grown, 2 * 1024 * 1024, "the threads' kept blocks were freed as they ended (grew \(grown) bytes)")
    }

    func testLibcurlAllocatesThroughIt() {
        // On a thread of its own, whose cache starts empty: a GET leaves libcurl's freed blocks
        // in it only if libcurl was given these functions.
        let url = httpbinURL() + "/get"
        let outcome = KeptBytes(), status = KeptBytes()
        onFreshThread {
            let loop = EventLoop()
            let session = Session(loop: loop)
            var answered = 0
            session.send(HTTPRequest(url: url)) { result in
                if case .success(let r) = result { answered = r.status } else { answered = -1 }
            }
            loop.run { answered != 0 }
            var n = 0, bytes = 0
            lunet_curl_mem_counts(&n, &bytes)
            outcome.value = n
            status.value = answered
        }
        XCTAssertEqual(status.value, 200)
        if keepsBlocks {
            XCTAssertGreaterThan(outcome.value, 0, "libcurl's freed blocks are kept by the loop's thread")
        } else {
            XCTAssertEqual(outcome.value, 0, "nothing is kept under AddressSanitizer")
        }
    }
}

/// A value a test thread hands back (read after its semaphore is signalled).
private final class KeptBytes: @unchecked Sendable { var value = 0 }
