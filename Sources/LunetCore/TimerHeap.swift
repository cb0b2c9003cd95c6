/// A min-heap of deadlines. Pure: the loop owns it and fires what is due. Entries with equal
/// deadlines fire in the order they were added (the sequence number breaks ties), so timers are
/// deterministic.
public struct TimerHeap<Payload> {
    public struct Entry {
        public let deadline: Double
        public let id: UInt64
        public let payload: Payload
    }

    private var heap: [Entry] = []
    private var live: Set<UInt64> = []   // ids not yet fired or cancelled
    private var nextID: UInt64 = 1

    public init() {}

    public var isEmpty: Bool { live.isEmpty }
    public var count: Int { live.count }

    @discardableResult
    public mutating func add(deadline: Double, _ payload: Payload) -> UInt64 {
        let id = nextID
        nextID += 1
        heap.append(Entry(deadline: deadline, id: id, payload: payload))
        live.insert(id)
        siftUp(heap.count - 1)
        return id
    }

    /// Cancelling is lazy: the entry is skipped when it reaches the top.
    public mutating func cancel(_ id: UInt64) {
        live.remove(id)
    }

    /// The earliest live deadline.
    public mutating func nextDeadline() -> Double? {
        dropCancelledTop()
        return heap.first?.deadline
    }

    /// Removes and returns the earliest entry if it is due at `now`.
    public mutating func popDue(now: Double) -> Entry? {
        dropCancelledTop()
        guard let top = heap.first, top.deadline <= now else { return nil }
        live.remove(top.id)
        return removeTop()
    }

    /// Removes every live entry, earliest first (a loop that closes).
    public mutating func removeAll() -> [Entry] {
        var out: [Entry] = []
        while let e = popDue(now: .infinity) { out.append(e) }
        heap.removeAll()
        return out
    }

    private mutating func dropCancelledTop() {
        while let top = heap.first, !live.contains(top.id) {
            _ = removeTop()
        }
    }

    private mutating func removeTop() -> Entry {
        let top = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown(0)
        }
        return top
    }

    private func less(_ a: Entry, _ b: Entry) -> Bool {
        a.deadline < b.deadline || (a.deadline == b.deadline && a.id < b.id)
    }

    private mutating func siftUp(_ index: Int) {
        var i = index
        while i > 0 {
            let parent = (i - 1) / 2
            guard less(heap[i], heap[parent]) else { return }
            heap.swapAt(i, parent)
            i = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
        var i = index
        while true {
            let l = 2 * i + 1, r = l + 1
            var smallest = i
            if l < heap.count && less(heap[l], heap[smallest]) { smallest = l }
            if r < heap.count && less(heap[r], heap[smallest]) { smallest = r }
            if smallest == i { return }
            heap.swapAt(i, smallest)
            i = smallest
        }
    }
}
