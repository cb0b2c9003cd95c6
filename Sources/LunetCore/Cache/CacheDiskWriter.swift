import Glibc

/// Writes to the disk tier on a thread of its own, so that a store (a file written, fsync'd and
/// renamed: ~5 ms on a typical disk, far more on a slow one) never stalls the loop and every
/// transfer in flight. The memory tier has an entry before its write is queued, so lookups see
/// it at once; the disk gets it soon after.
///
/// The promises:
/// - operations run in the order they were queued (so a write and a later removal of the same
///   key land in that order);
/// - a disk read of a key with operations still queued waits for them (`settle(key:)`): it never
///   sees the tier as it was before a write or a removal it was told of;
/// - management (clear, listing, stats) and the end of the cache wait for the whole queue.
///
/// The thread starts with the first operation and ends with the writer (`finish`).
final class CacheDiskWriter: @unchecked Sendable {
    enum Operation {
        case write(CacheEntry)
        case removePath(String, key: String)
        case removeKey(String)
    }

    private let disk: CacheDiskTier
    private var queue: [Operation] = []
    private var head = 0
    /// Operations queued or running, by key.
    private var pending: [String: Int] = [:]
    private var running = false
    private var stopping = false
    private var thread: pthread_t?
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// Signalled when work is queued, and when work is done.
    private let workQueued = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let workDone = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Runs before each operation on the writer's thread: tests make the disk slow with it.
    var beforeEachForTests: (@Sendable () -> Void)?

    init(disk: CacheDiskTier) {
        self.disk = disk
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(workQueued, nil)
        pthread_cond_init(workDone, nil)
    }

    deinit {
        finish()
        pthread_cond_destroy(workQueued)
        pthread_cond_destroy(workDone)
        pthread_mutex_destroy(mutex)
        workQueued.deallocate()
        workDone.deallocate()
        mutex.deallocate()
    }

    private static func key(of op: Operation) -> String {
        switch op {
        case .write(let e): return e.key
        case .removePath(_, let key), .removeKey(let key): return key
        }
    }

    /// Queues `op`; returns at once. (Without a thread, when none could be made, `op` runs here.)
    func enqueue(_ op: Operation) {
        pthread_mutex_lock(mutex)
        if thread == nil && !stopping && !noThread { noThread = !startThread() }
        if noThread {
            pthread_mutex_unlock(mutex)
            return perform(op)
        }
        queue.append(op)
        pending[Self.key(of: op), default: 0] += 1
        pthread_cond_signal(workQueued)
        pthread_mutex_unlock(mutex)
    }

    /// No thread could be made: operations run where they are queued.
    private var noThread = false

    /// Operations queued or running now (for tests and stats).
    var outstanding: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return queue.count - head + (running ? 1 : 0)
    }

    /// Waits until nothing is queued or running for `key` (at once when nothing is: a lock and
    /// a dictionary lookup).
    func settle(key: String) {
        pthread_mutex_lock(mutex)
        while (pending[key] ?? 0) > 0 { pthread_cond_wait(workDone, mutex) }
        pthread_mutex_unlock(mutex)
    }

    /// Waits until the queue is empty and nothing runs.
    func drain() {
        pthread_mutex_lock(mutex)
        while head < queue.count || running { pthread_cond_wait(workDone, mutex) }
        pthread_mutex_unlock(mutex)
    }

    /// Does what is queued, then ends the thread (the cache is going away).
    func finish() {
        pthread_mutex_lock(mutex)
        stopping = true
        pthread_cond_signal(workQueued)
        let t = thread
        thread = nil
        pthread_mutex_unlock(mutex)
        if let t { pthread_join(t, nil) }
    }

    /// Starts the thread (under the mutex); false when none could be made. The thread holds
    /// the writer unretained: `finish`, which every end of the writer runs, joins it first.
    private func startThread() -> Bool {
        let me = Unmanaged.passUnretained(self).toOpaque()
        var t = pthread_t()
        guard pthread_create(&t, nil, { raw in
            Unmanaged<CacheDiskWriter>.fromOpaque(raw!).takeUnretainedValue().work()
            return nil
        }, me) == 0 else { return false }
        thread = t
        return true
    }

    /// The thread: one operation at a time, in order, until told to finish with nothing left.
    private func work() {
        while true {
            pthread_mutex_lock(mutex)
            while head == queue.count && !stopping { pthread_cond_wait(workQueued, mutex) }
            if head == queue.count {
                pthread_mutex_unlock(mutex)
                return
            }
            let op = queue[head]
            head += 1
            if head > 256 && head * 2 > queue.count {
                queue.removeFirst(head)
                head = 0
            }
            running = true
            pthread_mutex_unlock(mutex)

            perform(op)

            pthread_mutex_lock(mutex)
            running = false
            let key = Self.key(of: op)
            if let n = pending[key], n > 1 { pending[key] = n - 1 } else { pending[key] = nil }
            pthread_cond_broadcast(workDone)
            pthread_mutex_unlock(mutex)
        }
    }

    private func perform(_ op: Operation) {
        beforeEachForTests?()
        switch op {
        case .write(let e): disk.write(e)
        case .removePath(let path, _): disk.remove(path: path)
        case .removeKey(let key): disk.remove(key: key)
        }
    }
}
