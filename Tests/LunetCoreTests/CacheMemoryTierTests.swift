import XCTest
@testable import LunetCore

final class CacheMemoryTierTests: XCTestCase {
    func entry(_ n: Int, body: Int = 100, vary: String? = nil) -> CacheEntry {
        CacheEntry(key: "GET https://example.com/\(n)", url: "https://example.com/\(n)", status: 200, reason: "OK", httpVersion: "1.1",
                   headers: HTTPHeaders([("Cache-Control", "max-age=1")]), body: ByteBuffer(String(repeating: "b", count: body)),
                   vary: vary.map { [CacheVaryField(name: "accept", value: $0)] } ?? [], credential: "", requestTime: cacheT0, responseTime: cacheT0)
    }

    func testLeastRecentlyUsedKeysGoFirst() {
        let cost = entry(0).cost
        let tier = CacheMemoryTier(limit: cost * 3, maxEntry: cost * 3)
        for i in 1...3 { XCTAssertTrue(tier.put(entry(i))) }
        XCTAssertEqual(tier.keysByRecency(), ["GET https://example.com/3", "GET https://example.com/2", "GET https://example.com/1"])
        XCTAssertEqual(tier.variants("GET https://example.com/1").count, 1)          // touch 1
        XCTAssertEqual(tier.keysByRecency().first, "GET https://example.com/1")
        XCTAssertEqual(tier.peek("GET https://example.com/2").count, 1)              // peeking does not touch
        tier.put(entry(4))                                                            // evicts 2, the least recent
        XCTAssertEqual(tier.keysByRecency(), ["GET https://example.com/4", "GET https://example.com/1", "GET https://example.com/3"])
        XCTAssertTrue(tier.variants("GET https://example.com/2").isEmpty)
        XCTAssertEqual(tier.bytes, cost * 3)
        XCTAssertEqual(tier.entryCount, 3)
    }

    func testBytesAreChargedAndLimitsHold() {
        let tier = CacheMemoryTier(limit: 10_000, maxEntry: 2_000)
        XCTAssertFalse(tier.put(entry(1, body: 5_000)))                // over maxEntry: not kept
        XCTAssertEqual(tier.bytes, 0)
        tier.put(entry(1))
        let before = tier.bytes
        tier.put(entry(1, body: 300))                                  // the same variant: replaced, not added
        XCTAssertEqual(tier.bytes, before + 200)
        XCTAssertEqual(tier.entryCount, 1)
        tier.put(entry(1, vary: "a"))                                  // another variant of the key
        XCTAssertEqual(tier.entryCount, 2)
        XCTAssertEqual(tier.keyCount, 1)
        XCTAssertTrue(tier.remove(key: "GET https://example.com/1", variant: entry(1, vary: "a").variant))
        XCTAssertEqual(tier.entryCount, 1)
        XCTAssertEqual(tier.remove(key: "GET https://example.com/1"), 1)
        XCTAssertEqual(tier.bytes, 0)
        for i in 0..<500 { tier.put(entry(i, body: i % 1000)) }
        XCTAssertLessThanOrEqual(tier.bytes, 10_000)
        XCTAssertEqual(tier.bytes, tier.allEntries().reduce(0) { $0 + $1.cost })
        tier.removeAll()
        XCTAssertEqual([tier.bytes, tier.entryCount, tier.keyCount], [0, 0, 0])
        XCTAssertEqual(CacheMemoryTier(limit: 0).put(entry(1)), false)
    }

    /// Random operations against a plain model of LRU order and sizes.
    func testAgreesWithASimpleModel() {
        var rng = SystemRandomNumberGenerator()
        let tier = CacheMemoryTier(limit: 6_000, maxEntry: 1_500)
        var model: [(key: String, cost: Int)] = []          // most recent first
        for _ in 0..<3_000 {
            let n = Int.random(in: 0..<30, using: &rng)
            let key = "GET https://example.com/\(n)"
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<5:
                let e = entry(n, body: Int.random(in: 0..<1_400, using: &rng))
                model.removeAll { $0.key == key }
                if e.cost <= 1_500 {
                    model.insert((key, e.cost), at: 0)
                    var total = model.reduce(0) { $0 + $1.cost }
                    while total > 6_000 { total -= model.removeLast().cost }
                }
                tier.put(e)
            case 5..<9:
                let found = !tier.variants(key).isEmpty
                XCTAssertEqual(found, model.contains { $0.key == key })
                if let i = model.firstIndex(where: { $0.key == key }) { model.insert(model.remove(at: i), at: 0) }
            default:
                tier.remove(key: key)
                model.removeAll { $0.key == key }
            }
            XCTAssertEqual(tier.keysByRecency(), model.map(\.key))
            XCTAssertEqual(tier.bytes, model.reduce(0) { $0 + $1.cost })
        }
    }
}
