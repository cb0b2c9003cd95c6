import XCTest
@testable import LunetCore

/// SlotTable: keys it hands out find their object until it is removed; a removed key, a key for
/// a slot in use again, and a key nobody was given find nothing.
final class SlotTableTests: XCTestCase {
    final class Box { let n: Int; init(_ n: Int) { self.n = n } }

    func testInsertFindRemove() {
        var t = SlotTable<Box>()
        let a = t.insert(Box(1)), b = t.insert(Box(2))
        XCTAssertEqual(t.count, 2)
        XCTAssertEqual(t[a]?.n, 1)
        XCTAssertEqual(t[b]?.n, 2)
        XCTAssertEqual(t.remove(a)?.n, 1)
        XCTAssertNil(t[a], "a removed key")
        XCTAssertNil(t.remove(a), "removing twice takes nothing")
        XCTAssertEqual(t.count, 1)
        XCTAssertEqual(t.all.map(\.n), [2])
    }

    func testAStaleKeyDoesNotFindTheSlotsNextObject() {
        var t = SlotTable<Box>()
        let old = t.insert(Box(1))
        t.remove(old)
        let new = t.insert(Box(2))
        XCTAssertNotEqual(old, new, "the slot is reused under another key")
        XCTAssertNil(t[old], "the old key finds nothing")
        XCTAssertNil(t.remove(old), "and removes nothing")
        XCTAssertEqual(t[new]?.n, 2, "the new object stays")
    }

    func testReservedKeysHoldNothingUntilSet() {
        var t = SlotTable<Box>()
        let k = t.reserve()
        XCTAssertNil(t[k])
        XCTAssertEqual(t.count, 1)
        XCTAssertTrue(t.all.isEmpty)
        t.set(k, Box(7))
        XCTAssertEqual(t[k]?.n, 7)
        t.remove(k)
        XCTAssertTrue(t.isEmpty)
        t.set(k, Box(8))
        XCTAssertNil(t[k], "setting a removed key puts nothing")
    }

    func testKeysNobodyWasGivenFindNothing() {
        var t = SlotTable<Box>()
        let k = t.insert(Box(1))
        t.remove(k)
        for key in [-1, 0, 1, 2, k + 1, (1 << 24) * 2, Int.max] {
            XCTAssertNil(t[key], "key \(key)")
            XCTAssertNil(t.remove(key), "key \(key)")
        }
        XCTAssertEqual(t.count, 0, "nothing taken twice")
        let again = t.insert(Box(3))
        XCTAssertEqual(t[again]?.n, 3)
        XCTAssertEqual(t.count, 1)
    }
}
