/// The memory tier: entries grouped by key (a key holds its variants), least recently used
/// keys evicted first once the charged bytes pass the limit. Slots live in one array and link
/// to each other by index, so that finding, touching, adding and evicting are O(1) with no
/// reference counting. Not thread-safe by itself: `HTTPCache` serialises access.
final class CacheMemoryTier {
    let limit: Int
    /// Entries charged more than this are not kept (they would push out too much else).
    let maxEntry: Int
    private(set) var bytes = 0
    private(set) var entryCount = 0

    private struct Slot {
        var key: String
        var variants: [CacheEntry]
        var cost: Int
        var prev: Int
        var next: Int
    }

    private var slots: [Slot] = []
    private var freeSlots: [Int] = []
    private var index: [String: Int] = [:]
    /// Most recently used.
    private var head = -1
    /// Least recently used: evicted first.
    private var tail = -1

    init(limit: Int, maxEntry: Int? = nil) {
        self.limit = Swift.max(0, limit)
        self.maxEntry = Swift.min(self.limit, maxEntry ?? self.limit / 8)
    }

    var keyCount: Int { index.count }

    /// The variants stored under `key`, and the key becomes the most recently used.
    func variants(_ key: String) -> [CacheEntry] {
        guard let i = index[key] else { return [] }
        moveToFront(i)
        return slots[i].variants
    }

    /// Without touching the order.
    func peek(_ key: String) -> [CacheEntry] {
        guard let i = index[key] else { return [] }
        return slots[i].variants
    }

    /// Adds `entry` (replacing its variant, if stored), makes its key the most recently used,
    /// and evicts from the other end down to the limit. An entry over `maxEntry` is not kept,
    /// and the variant it would have replaced is dropped as out of date.
    @discardableResult
    func put(_ entry: CacheEntry) -> Bool {
        let cost = entry.cost
        guard cost <= maxEntry else {
            remove(key: entry.key, variant: entry.variant)
            return false
        }
        let i: Int
        if let existing = index[entry.key] {
            i = existing
            if let v = slots[i].variants.firstIndex(where: { $0.variant == entry.variant }) {
                let old = slots[i].variants[v].cost
                slots[i].variants[v] = entry
                slots[i].cost += cost - old
                bytes += cost - old
            } else {
                slots[i].variants.append(entry)
                slots[i].cost += cost
                bytes += cost
                entryCount += 1
            }
            moveToFront(i)
        } else {
            let slot = Slot(key: entry.key, variants: [entry], cost: cost, prev: -1, next: -1)
            if let free = freeSlots.popLast() { i = free; slots[i] = slot } else { i = slots.count; slots.append(slot) }
            index[entry.key] = i
            linkFront(i)
            bytes += cost
            entryCount += 1
        }
        while bytes > limit, tail != -1 { removeSlot(tail) }
        return index[entry.key] != nil
    }

    /// Removes every variant of `key`; returns how many there were.
    @discardableResult
    func remove(key: String) -> Int {
        guard let i = index[key] else { return 0 }
        let n = slots[i].variants.count
        removeSlot(i)
        return n
    }

    @discardableResult
    func remove(key: String, variant: String) -> Bool {
        guard let i = index[key], let v = slots[i].variants.firstIndex(where: { $0.variant == variant }) else { return false }
        if slots[i].variants.count == 1 { removeSlot(i); return true }
        let cost = slots[i].variants[v].cost
        slots[i].variants.remove(at: v)
        slots[i].cost -= cost
        bytes -= cost
        entryCount -= 1
        return true
    }

    func removeAll() {
        slots.removeAll()
        freeSlots.removeAll()
        index.removeAll()
        head = -1
        tail = -1
        bytes = 0
        entryCount = 0
    }

    /// Keys from the most to the least recently used.
    func keysByRecency() -> [String] {
        var out: [String] = []
        var i = head
        while i != -1 { out.append(slots[i].key); i = slots[i].next }
        return out
    }

    func allEntries() -> [CacheEntry] {
        var out: [CacheEntry] = []
        var i = head
        while i != -1 { out.append(contentsOf: slots[i].variants); i = slots[i].next }
        return out
    }

    // MARK: the list

    private func unlink(_ i: Int) {
        let p = slots[i].prev, n = slots[i].next
        if p != -1 { slots[p].next = n } else { head = n }
        if n != -1 { slots[n].prev = p } else { tail = p }
        slots[i].prev = -1
        slots[i].next = -1
    }

    private func linkFront(_ i: Int) {
        slots[i].prev = -1
        slots[i].next = head
        if head != -1 { slots[head].prev = i }
        head = i
        if tail == -1 { tail = i }
    }

    private func moveToFront(_ i: Int) {
        guard head != i else { return }
        unlink(i)
        linkFront(i)
    }

    private func removeSlot(_ i: Int) {
        unlink(i)
        bytes -= slots[i].cost
        entryCount -= slots[i].variants.count
        index[slots[i].key] = nil
        slots[i] = Slot(key: "", variants: [], cost: 0, prev: -1, next: -1)
        freeSlots.append(i)
    }
}
