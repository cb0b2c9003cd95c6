import CLunetLua
import Glibc

/// One entry of the key cache: the bytes of a key (in the input) and its first eight bytes.
struct JSONKeySlot {
    var head: UInt64 = 0                     // the key's first (up to) eight bytes, little-endian
    var count = -1                           // its length; -1: empty
    var bytes: UnsafePointer<UInt8>? = nil   // where it was read (the input outlives the parse)
}

// MARK: - Keys

/// Object keys repeat (an array of records names the same members again and again), and
/// `lua_pushlstring` of a short string hashes it and walks Lua's string table, which on a big
/// heap misses the cache at every step. So the last key seen for each of `keyCacheSize` hashes
/// stays in a stack slot, and an equal key is pushed from there: the same interned string, found
/// without Lua. Only for containers (a scalar document has no keys) and unescaped keys.
extension JSONParser {
    static let keyCacheSize = 64             // a power of two
    static let shortStringLimit = 40         // LUAI_MAXSHORTLEN: longer strings are not interned

    /// At a document that is an array or object: reserves the cache's stack slots (nil) and its
    /// entries. Without room on the stack the parse goes on without it.
    mutating func startKeyCache() {
        guard lua_checkstack(L, Int32(Self.keyCacheSize) + 8) != 0,
              let slots = malloc(MemoryLayout<JSONKeySlot>.stride * Self.keyCacheSize) else { return }
        keySlots = slots.bindMemory(to: JSONKeySlot.self, capacity: Self.keyCacheSize)
        keySlots.unsafelyUnwrapped.initialize(repeating: JSONKeySlot(), count: Self.keyCacheSize)
        keyStackBase = lua_gettop(L) + 1
        lua_settop(L, keyStackBase + Int32(Self.keyCacheSize) - 1)
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
        let h = Int(truncatingIfNeeded: ((head ^ UInt64(n)) &* 0x9E37_79B9_7F4A_7C15) >> 58)
        let slot = slots + h
        if slot.pointee.count == n && slot.pointee.head == head
            && (n <= 8 || memcmp(slot.pointee.bytes.unsafelyUnwrapped + 8, s + 8, n - 8) == 0) {
            lua_pushvalue(L, keyStackBase + Int32(h))
            return
        }
        lua_pushlstring(L, UnsafeRawPointer(s).assumingMemoryBound(to: CChar.self), n)
        lua_copy(L, -1, keyStackBase + Int32(h))
        slot.pointee = JSONKeySlot(head: head, count: n, bytes: s)
    }
}
