/// Objects kept under integer keys the table hands out itself: an array of slots and a list of
/// free ones, so that putting, finding and taking out cost no hashing. The transfers in flight
/// are kept this way (by the loop, and by the Lua host under the number Lua holds): as
/// dictionaries they cost ~4k instructions of every request (callgrind, 64 concurrent GETs).
///
/// A key is a slot's index and that slot's generation, which moves each time the slot is taken
/// and each time it is emptied (odd: in use): a key kept after its object was taken out finds
/// nothing, even once the slot is in use again (a late core.cancel of a finished transfer must
/// not stop another one), and a key nobody was given finds nothing either.
///
/// Inlinable, so that the Lua host's use (another module) is specialized for its type: the
/// generic code was ~3k instructions a request.
public struct SlotTable<Value: AnyObject> {
    @usableFromInline var values: [Value?] = []
    @usableFromInline var generations: [Int] = []
    @usableFromInline var free: [Int] = []
    /// Keys handed out and not yet removed (reserved or holding an object).
    @inlinable public var count: Int { used }
    @usableFromInline var used = 0

    // A key is generation * slotLimit + index; both fit a Lua integer for any real run.
    @usableFromInline static var slotLimit: Int { 1 << 24 }

    @inlinable public init() {}

    @inlinable public var isEmpty: Bool { used == 0 }

    /// A new key whose slot holds nothing yet (see `set`).
    @inlinable public mutating func reserve() -> Int {
        let index: Int
        if let reused = free.popLast() {
            index = reused
        } else {
            index = values.count
            precondition(index < Self.slotLimit, "SlotTable: too many keys in use")
            values.append(nil)
            generations.append(0)
        }
        generations[index] += 1   // odd: in use
        used += 1
        return generations[index] * Self.slotLimit + index
    }

    /// Puts `value` under a new key.
    @inlinable public mutating func insert(_ value: Value) -> Int {
        let key = reserve()
        values[key % Self.slotLimit] = value
        return key
    }

    /// Puts `value` under `key`, a key `reserve` or `insert` gave and not removed since.
    @inlinable public mutating func set(_ key: Int, _ value: Value) {
        guard let index = live(key) else { return }
        values[index] = value
    }

    /// The object under `key`; nil when there is none (never set, removed, or a stale key).
    @inlinable public subscript(key: Int) -> Value? {
        guard let index = live(key) else { return nil }
        return values[index]
    }

    /// Takes out what is under `key` and frees the key; nothing for a stale or unknown key.
    @inlinable @discardableResult
    public mutating func remove(_ key: Int) -> Value? {
        guard let index = live(key) else { return nil }
        let value = values[index]
        values[index] = nil
        generations[index] += 1   // even: free
        free.append(index)
        used -= 1
        return value
    }

    /// Every object in the table (not the reserved keys that hold none).
    @inlinable public var all: [Value] { values.compactMap { $0 } }

    /// The slot of `key` when the key is current.
    @inlinable func live(_ key: Int) -> Int? {
        guard key >= 0 else { return nil }
        let index = key % Self.slotLimit
        let generation = key / Self.slotLimit
        guard index < values.count, generations[index] == generation, generation & 1 == 1 else { return nil }
        return index
    }
}
