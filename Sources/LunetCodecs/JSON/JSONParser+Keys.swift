import CLunetLua
import Glibc

/// One entry of the key cache: the bytes of a key (in the input) and its first eight bytes.
struct JSONKeySlot {
    var head: UInt64 = 0                     // the key's first (up to) eight bytes, little-endian
    var count = -1                           // its length; -1: empty
    var bytes: UnsafePointer<UInt8>? = nil   // where it was read (the input outlives the parse)

    @inline(__always)
    func holds(_ s: UnsafePointer<UInt8>, _ n: Int, head: UInt64) -> Bool {
        count == n && self.head == head && (n <= 8 || memcmp(bytes.unsafelyUnwrapped + 8, s + 8, n - 8) == 0)
    }
}

// MARK: - Keys

/// Object keys repeat (an array of records names the same members again and again), and
/// `lua_pushlstring` of a short string hashes it and walks Lua's string table, which on a big
/// heap misses the cache at every step. So recent keys stay in stack slots, and an equal key is
/// pushed from there: the same interned string, found without Lua. Only for containers (a
/// scalar document has no keys) and unescaped keys.
///
/// The cache is two-way set-associative: a key's hash picks a set of two slots, the one used
/// last first. Direct-mapped (one slot per hash), three of the 19 keys of the benchmark's records
/// shared a slot and two more another, so a quarter of the keys missed on every record; with
/// two ways a set holds two colliding keys, and a third must collide too to evict one. Big
/// documents get more sets: each slot costs a nil to set up, worth paying where there are
/// records enough to repeat keys, not for a small document.
extension JSONParser {
    static let smallKeyCacheBits = 5         // 32 sets, 64 slots
    static let largeKeyCacheBits = 7         // 128 sets, 256 slots
    static let largeDocument = 64 * 1024     // bytes from which the larger cache is used
    static let shortStringLimit = 40         // LUAI_MAXSHORTLEN: longer strings are not interned

    /// At a document that is an array or object: reserves the cache's stack slots (nil) and its
    /// entries. Without room on the stack the parse goes on without it.
    mutating func startKeyCache() {
        let bits = end - start >= Self.largeDocument ? Self.largeKeyCacheBits : Self.smallKeyCacheBits
        let slotCount = 2 << bits
        guard lua_checkstack(L, Int32(slotCount) + 8) != 0,
              let slots = malloc(MemoryLayout<JSONKeySlot>.stride * slotCount) else { return }
        keySlots = slots.bindMemory(to: JSONKeySlot.self, capacity: slotCount)
        keySlots.unsafelyUnwrapped.initialize(repeating: JSONKeySlot(), count: slotCount)
        keySetShift = UInt64(64 - bits)
        keyStackBase = lua_gettop(L) + 1
        lua_settop(L, keyStackBase + Int32(slotCount) - 1)
    }

    /// Pushes the key [s, s + n) (no escapes in it).
    @inline(__always)
    mutating func pushKey(_ s: UnsafePointer<UInt8>, _ n: Int) {
        guard let slots = keySlots, n <= Self.shortStringLimit else {
            lua_pushlstring(L, UnsafeRawPointer(s).assumingMemoryBound(to: CChar.self), n)
            return
        }
        var head: UInt64
        if end - s >= 8 {
            head = UInt64(littleEndian: UnsafeRawPointer(s).loadUnaligned(as: UInt64.self))
            if n < 8 { head &= (1 &<< UInt64(n &* 8)) &- 1 }
        } else {
            head = 0
            for i in 0..<min(n, 8) { head |= UInt64(s[i]) &<< UInt64(i &* 8) }
        }
        let set = 2 &* Int(truncatingIfNeeded: ((head ^ UInt64(n)) &* 0x9E37_79B9_7F4A_7C15) >> keySetShift)
        let first = slots + set
        let firstIndex = keyStackBase + Int32(truncatingIfNeeded: set)
        if first.pointee.holds(s, n, head: head) {
            lua_pushvalue(L, firstIndex)
            return
        }
        let second = first + 1
        if second.pointee.holds(s, n, head: head) {
            // Used last now: the two ways trade places.
            lua_pushvalue(L, firstIndex + 1)
            lua_copy(L, firstIndex, firstIndex + 1)
            lua_copy(L, -1, firstIndex)
            swap(&first.pointee, &second.pointee)
            return
        }
        // A miss: the way used less recently goes, the new key takes the first.
        lua_pushlstring(L, UnsafeRawPointer(s).assumingMemoryBound(to: CChar.self), n)
        lua_copy(L, firstIndex, firstIndex + 1)
        lua_copy(L, -1, firstIndex)
        second.pointee = first.pointee
        first.pointee = JSONKeySlot(head: head, count: n, bytes: s)
    }
}
