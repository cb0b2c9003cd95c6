import Glibc
import Synchronization

/// The disk tier: one file per stored response, under a directory that several processes may
/// share.
///
/// Layout: `DIR/v1/index` (lock and counters), and `DIR/v1/KK/KEY/VARIANT`, where KEY is 32
/// hex digits of SHA-256 of the key, KK its first two, and VARIANT 16 hex digits naming the
/// variant (`CacheEntry.variant`). Files are `CacheEntryCodec`'s format, mode 0600, in
/// directories of mode 0700.
///
/// Sharing: an entry is written to a temporary file in its own directory (`.tmp-PID-…`),
/// fsynced (with `syncWrites`), and renamed over its final name, so readers see the old file or
/// the new one, never a mix. Readers take no lock: an open file stays whole even if it is
/// replaced or removed. Every change to the set of final files — rename into place, removal, eviction, clearing —
/// happens under `flock(LOCK_EX)` on `index`, which also holds the total bytes and entries,
/// kept exact by each such change. When the total passes the limit, the lock holder rescans
/// the tree (correcting any drift, say from a process killed between a rename and the counter
/// update) and removes the least recently used files down to 90% of the limit. "Used" is the
/// file's modification time, set when written and refreshed when read (at most once a minute).
/// Temporary files left by dead processes (or older than an hour) are removed then too.
///
/// Damage: a file that is not exactly a valid entry (bad magic, version, lengths, any CRC,
/// metadata) is removed — only if it is still the same file (device and inode) — and reads as
/// a miss. Failures: if the directory cannot be created or written, the tier turns itself off
/// and says why (`disabledReason`); a failed write (a full disk) removes its temporary file,
/// leaves the previous entry in place, and is reported in `lastError`.
///
/// Thread-safe: one recursive mutex serialises the instance's methods (flock alone would not:
/// threads share the descriptor's lock). Two instances in one process exclude each other like
/// two processes (each opens its own `index`).
final class CacheDiskTier {
    let directory: String
    let limit: Int
    let maxEntry: Int
    /// fsync each entry before renaming it into place (see HTTPCache.Configuration.syncWrites).
    let syncWrites: Bool
    var _disabledReason: String?
    var _lastError: String?
    var disabledReason: String? { serial { _disabledReason } }
    var lastError: String? { serial { _lastError } }
    let mutex: UnsafeMutablePointer<pthread_mutex_t>
    var lockFD: Int32 = -1
    var opened = false
    var sequence = 0
    /// Tells this instance's temporary files from those of other instances in the process.
    var instance: UInt { UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque()) }

    /// Damaged files removed by this instance (for tests).
    private(set) var damagedRemoved = 0

    init(directory: String, limit: Int, maxEntry: Int? = nil, syncWrites: Bool = true) {
        var d = directory
        while d.count > 1, d.hasSuffix("/") { d.removeLast() }
        self.directory = d
        self.limit = Swift.max(0, limit)
        self.maxEntry = Swift.min(self.limit, maxEntry ?? self.limit / 8)
        self.syncWrites = syncWrites
        mutex = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        if lockFD >= 0 { close(lockFD) }
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func serial<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }

    var root: String { directory + "/v1" }
    var indexPath: String { root + "/index" }

    static func keyHash(_ key: String) -> String { CacheSHA256.hex(key, bytes: 16) }

    func keyDirectory(_ key: String) -> String {
        let h = Self.keyHash(key)
        return root + "/" + String(h.prefix(2)) + "/" + h
    }

    func path(for entry: CacheEntry) -> String { keyDirectory(entry.key) + "/" + entry.variant }

    /// Creates the directory and opens the index on first use; false when the tier is off.
    @discardableResult
    func open() -> Bool { serial { openLocked() } }

    func openLocked() -> Bool {
        if opened { return _disabledReason == nil }
        opened = true
        let ok = openFirstTime()
        openState.store(ok ? Self.on : Self.off, ordering: .releasing)
        return ok
    }

    private func openFirstTime() -> Bool {
        if let failure = Self.makeDirectories(root) {
            _disabledReason = "disk cache off: cannot create \(root): \(failure)"
            return false
        }
        let fd = Glibc.open(indexPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            _disabledReason = "disk cache off: cannot open \(indexPath): \(Self.errorText())"
            return false
        }
        lockFD = fd
        // A directory we cannot write to would fail every store: find out now.
        let probe = root + "/.probe-\(getpid())-\(instance)"
        let pfd = Glibc.open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        if pfd < 0 {
            _disabledReason = "disk cache off: cannot write in \(root): \(Self.errorText())"
            return false
        }
        close(pfd)
        unlink(probe)
        return true
    }

    // MARK: reading

    /// The best entry under `key` that `accept` takes (the most recent by `Date`, then arrival),
    /// body and all, verified; nil when there is none. Damaged files met on the way are removed
    /// when no one holds the tier's locks (else a later read removes them).
    ///
    /// Without the mutex: reads run on the loop, and the writer thread holds the mutex through a
    /// whole write (a slow rename stalled a hit 1.8 s). A reader needs no lock: a file is renamed
    /// into place whole, and one open stays whole when it is replaced. Only the first use opens
    /// the tier under the mutex.
    func load(key: String, accept: (CacheEntry) -> Bool) -> CacheEntry? {
        switch openState.load(ordering: .acquiring) {
        case Self.off: return nil
        case Self.notYet: guard open() else { return nil }
        default: break
        }
        let dir = keyDirectory(key)
        var candidates: [(path: String, entry: CacheEntry)] = []
        for name in Self.list(dir) where !name.hasPrefix(".") {
            let p = dir + "/" + name
            guard let e = readEntryLocked(p, withBody: false, holdingLocks: false) else { continue }
            if e.key == key, accept(e) { candidates.append((p, e)) }
        }
        candidates.sort { $0.entry.recency > $1.entry.recency }
        for c in candidates {
            if let full = readEntryLocked(c.path, withBody: true, holdingLocks: false), full.key == key, accept(full) { return full }
        }
        return nil
    }

    /// Whether the tier was opened, as `load` reads it without the mutex.
    static let notYet = 0, on = 1, off = 2
    let openState = Atomic<Int>(0)

    /// A test's pause inside a write, with the mutex and the index lock held (before the rename).
    nonisolated(unsafe) var insideWriteForTests: (() -> Void)?

    /// Reads and checks one file. `withBody: false` reads header and metadata only (and gives an
    /// empty body); `true` also reads and checks the body, and records the access.
    func readEntry(_ path: String, withBody: Bool) -> CacheEntry? {
        serial { readEntryLocked(path, withBody: withBody) }
    }

    func readEntryLocked(_ path: String, withBody: Bool, holdingLocks: Bool = true) -> CacheEntry? {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        let size = Int(st.st_size)
        func damaged() -> CacheEntry? {
            if holdingLocks {
                removeIfSame(path, device: st.st_dev, inode: st.st_ino)
            } else {
                removeIfSameUncontended(path, device: st.st_dev, inode: st.st_ino)
            }
            return nil
        }
        guard size >= CacheEntryCodec.headerSize, let headerBytes = Self.readExactly(fd, count: CacheEntryCodec.headerSize, offset: 0),
              let header = CacheEntryCodec.decodeHeader(headerBytes, fileSize: size),
              let meta = Self.readExactly(fd, count: header.metaLength, offset: CacheEntryCodec.headerSize),
              CacheCRC32.checksum(meta) == header.metaCRC else { return damaged() }
        let body = ByteBuffer(capacity: withBody ? header.bodyLength : 0)
        if withBody {
            guard Self.readBody(fd, into: body, count: header.bodyLength, offset: CacheEntryCodec.headerSize + header.metaLength) == header.bodyCRC
            else { return damaged() }
        }
        guard let entry = CacheEntryCodec.decodeMetadata(meta, body: body) else { return damaged() }
        if withBody {
            let now = HTTPDate.currentTime()
            if now - Double(st.st_mtim.tv_sec) > 60 { Self.touch(fd) }
        }
        return entry
    }

    // MARK: writing

    /// Writes `entry` atomically over its variant's file. False (with `lastError`) on failure,
    /// with nothing half-written left behind.
    @discardableResult
    func write(_ entry: CacheEntry) -> Bool { serial { writeLocked(entry) } }

    func writeLocked(_ entry: CacheEntry) -> Bool {
        guard openLocked() else { return false }
        let meta = CacheEntryCodec.encodeMetadata(entry)
        let total = CacheEntryCodec.headerSize + meta.count + entry.body.count
        let final = path(for: entry)
        guard total <= maxEntry, meta.count <= CacheEntryCodec.maxMetadata else {
            _ = withLock { unlinkCounted(final) }       // the stored variant is out of date either way
            return false
        }
        let bodyCRC = CacheCRC32.update(0, UnsafeRawBufferPointer(entry.body.bytes))
        let header = CacheEntryCodec.encodeHeader(.init(metaLength: meta.count, bodyLength: entry.body.count,
                                                        metaCRC: CacheCRC32.checksum(meta), bodyCRC: bodyCRC))
        let dir = keyDirectory(entry.key)
        var fd: Int32 = -1
        var temp = ""
        for attempt in 0..<3 {
            if let failure = Self.makeDirectories(dir) {
                return fail("cannot create \(dir): \(failure)", errno: errno)
            }
            sequence += 1
            temp = dir + "/.tmp-\(getpid())-\(instance)-\(sequence)"
            fd = Glibc.open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd >= 0 { break }
            // ENOENT: an evicting process removed the empty directory in between; try again.
            if (errno != ENOENT && errno != EEXIST) || attempt == 2 {
                return fail("cannot create \(temp): \(Self.errorText())", errno: errno)
            }
        }
        var ok = Self.writeAll(fd, header) && Self.writeAll(fd, meta)
            && Self.writeAll(fd, UnsafeRawBufferPointer(entry.body.bytes))
        var code = errno
        if ok && syncWrites && fsync(fd) != 0 { ok = false; code = errno }
        if close(fd) != 0 && ok { ok = false; code = errno }
        guard ok else {
            unlink(temp)
            return fail("cannot write \(final): \(Self.errorText(code))", errno: code)
        }
        return withLock {
            insideWriteForTests?()
            var counter = readCounter()
            var old = stat()
            let existed = lstat(final, &old) == 0
            guard rename(temp, final) == 0 else {
                let code = errno
                unlink(temp)
                return fail("cannot rename into \(final): \(Self.errorText(code))", errno: code)
            }
            if var c = counter {
                c.bytes += total - (existed ? Int(old.st_size) : 0)
                c.entries += existed ? 0 : 1
                counter = c
            } else {
                counter = scan(removeOrphans: false).counter
            }
            writeCounter(counter!)
            if counter!.bytes > limit { evictLocked() }
            _lastError = nil
            return true
        }
    }

    func fail(_ message: String, errno code: Int32) -> Bool {
        if code == EACCES || code == EPERM || code == EROFS {
            _disabledReason = "disk cache off: \(message)"
            openState.store(Self.off, ordering: .releasing)
        }
        _lastError = message
        return false
    }

    // MARK: removing

    /// Removes every variant of `key`; returns how many files went.
    @discardableResult
    func remove(key: String) -> Int {
        serial { removeLocked(key: key) }
    }

    func removeLocked(key: String) -> Int {
        guard openLocked() else { return 0 }
        let dir = keyDirectory(key)
        return withLock {
            var removed = 0
            for name in Self.list(dir) where !name.hasPrefix(".") {     // ".tmp-…": someone's write in progress
                if unlinkCounted(dir + "/" + name) { removed += 1 }
            }
            rmdir(dir)
            return removed
        }
    }

    @discardableResult
    func remove(path: String) -> Bool {
        serial { openLocked() && withLock { unlinkCounted(path) } }
    }

    /// `removeIfSame` from a reader that holds no lock and must not wait: done only when the
    /// mutex and the index lock are free at once.
    func removeIfSameUncontended(_ path: String, device: dev_t, inode: ino_t) {
        guard pthread_mutex_trylock(mutex) == 0 else { return }
        defer { pthread_mutex_unlock(mutex) }
        guard lockFD >= 0, flock(lockFD, LOCK_EX | LOCK_NB) == 0 else { return }
        flock(lockFD, LOCK_UN)
        removeIfSame(path, device: device, inode: inode)
    }

    /// Removes a damaged file if it is still the one that was read.
    func removeIfSame(_ path: String, device: dev_t, inode: ino_t) {
        withLock {
            var st = stat()
            guard lstat(path, &st) == 0, st.st_dev == device, st.st_ino == inode, unlinkCounted(path) else { return }
            damagedRemoved += 1
        }
    }

    /// Under the lock: removes a final file and takes it off the counter.
    func unlinkCounted(_ path: String) -> Bool {
        var st = stat()
        guard lstat(path, &st) == 0, unlink(path) == 0 else { return false }
        if var c = readCounter() {
            c.bytes -= Int(st.st_size)
            c.entries -= 1
            writeCounter(c)
        }
        return true
    }

    /// Removes every entry (and every stale temporary file).
    func removeAll() {
        serial { if openLocked() { withLock { removeAllLocked() } } }
    }

    func removeAllLocked() {
        for bucket in Self.list(root) where Self.isBucket(bucket) {
            let b = root + "/" + bucket
            for key in Self.list(b) {
                let k = b + "/" + key
                for name in Self.list(k) where !name.hasPrefix(".tmp-") || isOrphan(k + "/" + name, name) {
                    unlink(k + "/" + name)
                }
                rmdir(k)
            }
            rmdir(b)
        }
        writeCounter(Counter(bytes: 0, entries: 0))
    }

    // MARK: index file

    private static let indexMagic: [UInt8] = [0x4C, 0x4E, 0x43, 0x49]    // "LNCI"

    func readCounter() -> Counter? {
        guard let b = Self.readExactly(lockFD, count: 32, offset: 0), Array(b[0..<4]) == Self.indexMagic else { return nil }
        var r = CacheEntryCodec.Reader(bytes: b, at: 4)
        guard let v = r.u32(), v == 1, let bytes = r.u64(), let entries = r.u64(), let crc = r.u32(),
              crc == CacheCRC32.checksum(Array(b[0..<24])),
              bytes <= UInt64(Int.max / 2), entries <= UInt64(Int.max / 2) else { return nil }
        return Counter(bytes: Int(bytes), entries: Int(entries))
    }

    func writeCounter(_ c: Counter) {
        var w = CacheEntryCodec.Writer()
        w.bytes = Self.indexMagic
        w.u32(1)
        w.u64(UInt64(Swift.max(0, c.bytes)))
        w.u64(UInt64(Swift.max(0, c.entries)))
        w.u32(CacheCRC32.checksum(w.bytes))
        w.u32(0)
        _ = w.bytes.withUnsafeBytes { pwrite(lockFD, $0.baseAddress, 32, 0) }
    }

    func withLock<T>(_ body: () -> T) -> T {
        // Someone removed the directory (rm -rf ~/.cache/lunet): our index is gone with it, and
        // other processes would lock a new one. Recreate and reopen it.
        var st = stat()
        if fstat(lockFD, &st) == 0, st.st_nlink == 0, Self.makeDirectories(root) == nil {
            let fd = Glibc.open(indexPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            if fd >= 0 { close(lockFD); lockFD = fd }
        }
        // If locking is impossible (some network file systems), go on: entries stay whole
        // thanks to rename; only the counters could drift, and eviction rescans.
        while flock(lockFD, LOCK_EX) != 0 && errno == EINTR {}
        defer { flock(lockFD, LOCK_UN) }
        return body()
    }

    // MARK: listing

    /// Every readable entry (metadata only, empty bodies) with its file size.
    func allEntries() -> [(entry: CacheEntry, size: Int)] {
        serial { allEntriesLocked() }
    }

    func allEntriesLocked() -> [(entry: CacheEntry, size: Int)] {
        guard openLocked() else { return [] }
        var out: [(CacheEntry, Int)] = []
        for bucket in Self.list(root) where Self.isBucket(bucket) {
            let b = root + "/" + bucket
            for key in Self.list(b) {
                let k = b + "/" + key
                for name in Self.list(k) where !name.hasPrefix(".") {
                    let p = k + "/" + name
                    var st = stat()
                    guard lstat(p, &st) == 0, let e = readEntryLocked(p, withBody: false) else { continue }
                    out.append((e, Int(st.st_size)))
                }
            }
        }
        return out
    }

}
