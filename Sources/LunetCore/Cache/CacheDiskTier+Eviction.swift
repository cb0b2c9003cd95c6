import Glibc

/// The disk tier's accounting and eviction: the byte and entry counter kept in the index, the
/// rescan that corrects it, least-recently-used eviction, orphaned temporary files.
extension CacheDiskTier {
    struct Counter: Equatable {
        var bytes: Int
        var entries: Int
    }

    /// Bytes and entries, from the index (rescanned if the index is damaged).
    func usage() -> Counter {
        serial { () -> Counter in
            guard openLocked() else { return Counter(bytes: 0, entries: 0) }
            return withLock {
                if let c = readCounter() { return c }
                let c = scan(removeOrphans: false).counter
                writeCounter(c)
                return c
            }
        }
    }

    /// Rescans and evicts down to 90% of the limit if over it; the counter is corrected either way.
    func evictIfNeeded() {
        serial {
            guard openLocked() else { return }
            withLock {
                let c = scan(removeOrphans: true).counter
                writeCounter(c)
                if c.bytes > limit { evictLocked() }
            }
        }
    }

    struct FileInfo {
        var path: String
        var size: Int
        var mtime: Double
    }

    /// Every final file, with a fresh counter. With `removeOrphans`, temporary files of dead
    /// processes (or older than an hour) are removed on the way.
    func scan(removeOrphans: Bool) -> (files: [FileInfo], counter: Counter) {
        var files: [FileInfo] = []
        var total = 0
        for bucket in Self.list(root) where Self.isBucket(bucket) {
            let b = root + "/" + bucket
            for key in Self.list(b) {
                let k = b + "/" + key
                for name in Self.list(k) {
                    let p = k + "/" + name
                    if name.hasPrefix(".") {
                        if removeOrphans && name.hasPrefix(".tmp-") && isOrphan(p, name) { unlink(p) }
                        continue
                    }
                    var st = stat()
                    guard lstat(p, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
                    let size = Int(st.st_size)
                    files.append(FileInfo(path: p, size: size, mtime: Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9))
                    total += size
                }
            }
        }
        return (files, Counter(bytes: total, entries: files.count))
    }

    /// Under the lock: least recently used files out until the total is at most 90% of the limit.
    func evictLocked() {
        let (files, counter) = scan(removeOrphans: true)
        var c = counter
        let target = limit / 10 * 9
        if c.bytes > target {
            for f in files.sorted(by: { $0.mtime < $1.mtime }) {
                if c.bytes <= target { break }
                if unlink(f.path) == 0 {
                    c.bytes -= f.size
                    c.entries -= 1
                    let dir = String(f.path[..<f.path.lastIndex(of: "/")!])
                    rmdir(dir)                      // only succeeds when empty
                }
            }
        }
        writeCounter(c)
    }

    func isOrphan(_ path: String, _ name: String) -> Bool {
        // .tmp-PID-INSTANCE-SEQ
        let parts = name.split(separator: "-")
        if parts.count >= 2, let pid = Int32(parts[1]), pid > 0, pid != getpid() {
            if kill(pid, 0) != 0 && errno == ESRCH { return true }
        }
        var st = stat()
        guard lstat(path, &st) == 0 else { return false }
        return HTTPDate.currentTime() - Double(st.st_mtim.tv_sec) > 3600
    }
}
