import Foundation
import XCTest
@testable import LunetCore

/// The disk tier: persistence, damage, limits, failures, and several writers at once.
final class CacheDiskTests: XCTestCase {
    override func tearDown() {
        // This process's directories (a child process of the hammer test uses its parent's).
        guard ProcessInfo.processInfo.environment["LUNET_CACHE_HAMMER_DIR"] == nil else { return }
        let base = NSTemporaryDirectory()
        let prefix = "lunet-cache-tests-\(getpid())-"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? [] where name.hasPrefix(prefix) {
            let path = base + name
            chmod(path + "/ro", 0o700)
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    func diskCache(_ dir: String, limit: Int = 1 << 20, memory: Int = 1 << 20, sync: Bool = true) -> HTTPCache {
        HTTPCache(HTTPCache.Configuration(memoryLimit: memory, diskLimit: limit, directory: dir, syncWrites: sync))
    }

    @discardableResult
    func put(_ cache: HTTPCache, _ url: String, body: String, headers: [(String, String)] = [("Cache-Control", "max-age=1000")],
             request: [(String, String)] = [], at time: Double = cacheT0) -> CacheStoreResult {
        let req = cacheRequest(url, request)
        let result = cache.store(request: req, response: cacheResponse(200, headers, body: body, request: req, date: time),
                                 requestTime: time, responseTime: time)
        // The disk write happens on the cache's writer thread: these tests look at the disk itself.
        cache.flush()
        return result
    }

    func body(_ cache: HTTPCache, _ url: String, _ headers: [(String, String)] = [], now: Double = cacheT0 + 1) -> String? {
        cache.lookup(cacheRequest(url, headers), now: now).stored?.entry.body.string
    }

    func testEntriesSurviveANewInstance() {
        let dir = cacheTemporaryDirectory()
        let first = diskCache(dir, limit: 8 << 20, memory: 8 << 20)
        let big = String(repeating: "0123456789", count: 50_000)            // 500 KB, several read chunks
        XCTAssertEqual(put(first, "https://example.com/a", body: "alpha", headers: [("Cache-Control", "max-age=1000"), ("ETag", "\"e\""),
                                                                              ("Content-Type", "text/plain; charset=utf-8"), ("X-Two", "1"), ("x-two", "2")]), .stored)
        put(first, "https://example.com/big", body: big)
        put(first, "https://example.com/v", body: "english", headers: [("Cache-Control", "max-age=1000"), ("Vary", "Accept-Language")],
            request: [("Accept-Language", "en")])
        put(first, "https://example.com/v", body: "french", headers: [("Cache-Control", "max-age=1000"), ("Vary", "Accept-Language")],
            request: [("Accept-Language", "fr")])
        XCTAssertEqual(first.stats().diskEntries, 4)

        let second = diskCache(dir, limit: 8 << 20, memory: 8 << 20)                          // a restart: empty memory, same directory
        XCTAssertEqual(second.stats().memoryEntries, 0)
        guard case .hit(let stored) = second.lookup(cacheRequest("https://example.com/a"), now: cacheT0 + 10) else { return XCTFail() }
        let r = stored.response(for: cacheRequest("https://example.com/a"))
        XCTAssertEqual(r.body.string, "alpha")
        XCTAssertEqual(r.headers.all("X-Two"), ["1", "2"])
        XCTAssertEqual(r.headers["Content-Type"], "text/plain; charset=utf-8")
        XCTAssertEqual(r.headers["Age"], "10")
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.reason, "OK")
        XCTAssertTrue(body(second, "https://example.com/big") == big)
        XCTAssertEqual(body(second, "https://example.com/v", [("Accept-Language", "fr")]), "french")
        XCTAssertEqual(body(second, "https://example.com/v", [("Accept-Language", "en")]), "english")
        XCTAssertNil(body(second, "https://example.com/v", [("Accept-Language", "de")]))
        XCTAssertEqual(second.stats().memoryEntries, 4)                      // read entries are kept in memory
        let listing = second.entries(now: cacheT0 + 10)
        XCTAssertEqual(listing.count, 4)
        XCTAssertTrue(listing.allSatisfy { $0.onDisk && $0.inMemory })
        XCTAssertEqual(listing.first { $0.url.hasSuffix("/big") }?.size, big.utf8.count)
        // Files are private to the user.
        for f in cacheEntryFiles(dir) {
            let mode = (try? FileManager.default.attributesOfItem(atPath: dir + "/" + f)[.posixPermissions] as? Int) ?? -1
            XCTAssertEqual(mode, 0o600, f)
        }
    }

    func testPurgeAndClearReachTheDisk() {
        let dir = cacheTemporaryDirectory()
        let cache = diskCache(dir)
        for i in 0..<5 { put(cache, "https://example.com/\(i)", body: "b\(i)") }
        XCTAssertEqual(cache.purge("https://example.com/2"), 1)
        XCTAssertNil(body(diskCache(dir), "https://example.com/2"))
        XCTAssertEqual(body(diskCache(dir), "https://example.com/3"), "b3")
        XCTAssertEqual(cache.stats().diskEntries, 4)
        cache.clear()
        XCTAssertEqual(cacheEntryFiles(dir), [])
        XCTAssertEqual(cache.stats().diskEntries, 0)
        XCTAssertEqual(cache.stats().diskBytes, 0)
        XCTAssertNil(body(diskCache(dir), "https://example.com/3"))
    }

    /// Every kind of damage: the entry is removed and reads as a miss, never served.
    func testDamagedEntriesAreDroppedAsMisses() throws {
        struct Damage { let name: String; let apply: (inout [UInt8]) -> Void }
        let damages: [Damage] = [
            Damage(name: "flip a body byte") { $0[$0.count - 2] ^= 0x01 },
            Damage(name: "flip a metadata byte") { $0[40] ^= 0x20 },
            Damage(name: "flip a header length byte") { $0[9] ^= 0x01 },
            Damage(name: "flip the magic") { $0[0] = 0x00 },
            Damage(name: "truncate by one") { $0.removeLast() },
            Damage(name: "truncate to the header") { $0 = Array($0[0..<32]) },
            Damage(name: "truncate inside the header") { $0 = Array($0[0..<10]) },
            Damage(name: "zero length") { $0 = [] },
            Damage(name: "append a byte") { $0.append(0) },
            Damage(name: "garbage") { b in b = (0..<4096).map { _ in UInt8.random(in: 0...255) } },
            Damage(name: "a huge body length with a valid header CRC") { b in
                let h = CacheEntryCodec.encodeHeader(.init(metaLength: 100, bodyLength: Int.max / 4, metaCRC: 0, bodyCRC: 0))
                b.replaceSubrange(0..<32, with: h)
            },
            Damage(name: "a huge metadata length with a valid header CRC") { b in
                let h = CacheEntryCodec.encodeHeader(.init(metaLength: Int(UInt32.max), bodyLength: 0, metaCRC: 0, bodyCRC: 0))
                b.replaceSubrange(0..<32, with: h)
            },
            Damage(name: "another format version") { b in
                var h = Array(b[0..<32]); h[4] = 9
                var w = CacheEntryCodec.Writer(); w.u32(CacheCRC32.checksum(Array(h[0..<28])))
                h.replaceSubrange(28..<32, with: w.bytes)
                b.replaceSubrange(0..<32, with: h)
            },
        ]
        for damage in damages {
            let dir = cacheTemporaryDirectory(damage.name)
            put(diskCache(dir), "https://example.com/a", body: "the body of a", headers: [("Cache-Control", "max-age=1000"), ("ETag", "\"1\"")])
            put(diskCache(dir), "https://example.com/b", body: "b stays")
            let files = cacheEntryFiles(dir)
            XCTAssertEqual(files.count, 2)
            let aFile = try XCTUnwrap(files.first { (try? String(contentsOfFile: dir + "/" + $0, encoding: .isoLatin1))?.contains("example.com/a") == true })
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir + "/" + aFile)))
            damage.apply(&bytes)
            try Data(bytes).write(to: URL(fileURLWithPath: dir + "/" + aFile))

            let cache = diskCache(dir)
            XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/a"), now: cacheT0 + 1).kind, "miss", damage.name)
            XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/" + aFile), "\(damage.name): the damaged file should be gone")
            XCTAssertEqual(cache.disk?.damagedRemoved, 1, damage.name)
            XCTAssertEqual(body(cache, "https://example.com/b"), "b stays", damage.name)
            XCTAssertEqual(cache.stats().diskEntries, 1, damage.name)
            // The cache goes on working for that URL.
            XCTAssertEqual(put(cache, "https://example.com/a", body: "new a"), .stored)
            XCTAssertEqual(body(diskCache(dir), "https://example.com/a"), "new a", damage.name)
        }
    }

    func testStrangeThingsInTheDirectoryAreIgnored() throws {
        let dir = cacheTemporaryDirectory()
        let cache = diskCache(dir)
        put(cache, "https://example.com/a", body: "a")
        let keyDir = try XCTUnwrap(cache.disk?.keyDirectory("GET https://example.com/a"))
        try FileManager.default.createDirectory(atPath: keyDir + "/0123456789abcdef", withIntermediateDirectories: true)   // a directory as a variant
        _ = FileManager.default.createFile(atPath: dir + "/v1/zz-not-a-bucket", contents: Data([1, 2, 3]))
        _ = FileManager.default.createFile(atPath: dir + "/v1/index", contents: Data("junk".utf8))                          // a damaged index
        let again = diskCache(dir)
        XCTAssertEqual(body(again, "https://example.com/a"), "a")
        XCTAssertEqual(again.stats().diskEntries, 1)                                                                     // rebuilt by a scan
        XCTAssertEqual(again.entries().count, 1)
    }

    func testTheDiskLimitHoldsAfterManyStores() {
        let dir = cacheTemporaryDirectory()
        let limit = 60_000
        let cache = diskCache(dir, limit: limit, memory: 0, sync: false)      // fsync changes nothing here but the time
        for i in 0..<400 {
            put(cache, "https://example.com/\(i)", body: String(repeating: "x", count: 200 + (i * 37) % 1500))
            let s = cache.stats()
            XCTAssertLessThanOrEqual(s.diskBytes, limit, "after \(i)")
        }
        let files = cacheEntryFiles(dir)
        let actual = files.reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: dir + "/" + $1)[.size] as? Int) ?? 0) }
        let s = cache.stats()
        XCTAssertLessThanOrEqual(actual, limit)
        XCTAssertEqual(actual, s.diskBytes)
        XCTAssertEqual(files.count, s.diskEntries)
        XCTAssertGreaterThan(files.count, 20)
        XCTAssertEqual(body(cache, "https://example.com/399"), String(repeating: "x", count: 200 + (399 * 37) % 1500))
        // Entries over an eighth of the limit are not written (and replace nothing stale).
        XCTAssertEqual(put(cache, "https://example.com/huge", body: String(repeating: "h", count: limit / 4)), .stored)   // memory tier said yes? no: memory is 0
        XCTAssertNil(diskCache(dir).disk?.load(key: "GET https://example.com/huge") { _ in true })
    }

    func testEvictionTakesTheLeastRecentlyUsed() throws {
        let dir = cacheTemporaryDirectory()
        let roomy = diskCache(dir, limit: 1 << 20, memory: 0)
        for i in 0..<10 { put(roomy, "https://example.com/\(i)", body: String(repeating: "\(i)", count: 1000)) }
        let files = cacheEntryFiles(dir)
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: dir + "/" + files[0])[.size] as? Int)
        // Age the files: entry i was last used 1000 - i seconds ago.
        let now = Int(Date().timeIntervalSince1970)
        for f in files {
            let e = try XCTUnwrap(roomy.disk?.readEntry(dir + "/" + f, withBody: false))
            let i = Int(e.url.split(separator: "/").last!)!
            var times = [timespec(tv_sec: now - 1000 + i, tv_nsec: 0), timespec(tv_sec: now - 1000 + i, tv_nsec: 0)]
            XCTAssertEqual(utimensat(AT_FDCWD, dir + "/" + f, &times, 0), 0)
        }
        XCTAssertEqual(body(diskCache(dir, memory: 0), "https://example.com/0")?.count, 1000)      // reading 0 makes it the most recent
        // Room for 12.5 entries: the 13th store goes over and evicts down to 90% (11.25 entries): 1 and 2 go.
        let tight = diskCache(dir, limit: size * 12 + size / 2, memory: 0)
        for i in 10..<14 { put(tight, "https://example.com/\(i)", body: String(repeating: "n", count: 1000)) }
        let reader = diskCache(dir, memory: 0)
        XCTAssertNotNil(body(reader, "https://example.com/0"), "recently read: kept")
        for i in 1...2 { XCTAssertNil(body(reader, "https://example.com/\(i)")?.count, "\(i): least recently used: evicted") }
        for i in 3..<14 { XCTAssertNotNil(body(reader, "https://example.com/\(i)"), "\(i) kept") }
        XCTAssertLessThanOrEqual(reader.stats().diskBytes, size * 12 + size / 2)
    }

    func testAMissingDirectoryIsCreated() {
        let dir = cacheTemporaryDirectory() + "/deeper/and/deeper"
        let cache = diskCache(dir)
        XCTAssertEqual(put(cache, "https://example.com/a", body: "a"), .stored)
        XCTAssertEqual(cacheEntryFiles(dir).count, 1)
        XCTAssertNil(cache.stats().diskDisabledReason)
    }

    func testAnUnusableDirectoryTurnsTheDiskTierOffButNotTheCache() throws {
        let base = cacheTemporaryDirectory()
        _ = FileManager.default.createFile(atPath: base + "/file", contents: Data("x".utf8))
        var candidates = [base + "/file/cache"]                    // a path through a regular file
        if getuid() != 0 {                                         // root writes anywhere: only others can test permissions
            try FileManager.default.createDirectory(atPath: base + "/ro", withIntermediateDirectories: true)
            chmod(base + "/ro", 0o500)
            candidates.append(base + "/ro/cache")
        }
        for dir in candidates {
            let cache = diskCache(dir)
            XCTAssertEqual(put(cache, "https://example.com/a", body: "a"), .stored, dir)
            XCTAssertEqual(body(cache, "https://example.com/a"), "a", "the memory tier still works")
            let s = cache.stats()
            XCTAssertTrue(s.diskDisabledReason?.hasPrefix("disk cache off: cannot create \(dir)") == true, s.diskDisabledReason ?? "nil")
            XCTAssertEqual(s.diskEntries, 0)
            XCTAssertEqual(cache.entries().count, 1)
            cache.clear()
            XCTAssertEqual(cache.purge("https://example.com/a"), 0)
        }
        chmod(base + "/ro", 0o700)
    }

    /// A write that fails half-way (here: over RLIMIT_FSIZE, as a full disk would) leaves no
    /// temporary file and no half entry, and the previous entry stays.
    func testAFailedWriteLeavesNothingHalfWritten() throws {
        let dir = cacheTemporaryDirectory()
        let cache = diskCache(dir, limit: 64 << 20, memory: 0)
        put(cache, "https://example.com/a", body: "old and whole")
        let previousHandler = signal(SIGXFSZ, SIG_IGN)        // over the limit, write fails with EFBIG instead of a signal
        var saved = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &saved)
        var small = saved
        small.rlim_cur = 16 * 1024
        XCTAssertEqual(setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &small), 0)
        let result = put(cache, "https://example.com/a", body: String(repeating: "n", count: 200_000))
        setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &saved)
        signal(SIGXFSZ, previousHandler)
        XCTAssertEqual(result, .stored)                                       // the caller's response is fine; only the disk copy failed
        let s = cache.stats()
        XCTAssertTrue(s.lastDiskError?.contains("cannot write") == true, s.lastDiskError ?? "nil")
        XCTAssertNil(s.diskDisabledReason)
        XCTAssertFalse(cacheFiles(dir).contains { $0.contains(".tmp-") }, "\(cacheFiles(dir))")
        XCTAssertEqual(body(diskCache(dir), "https://example.com/a"), "old and whole")
        XCTAssertEqual(put(cache, "https://example.com/a", body: "written later"), .stored)
        XCTAssertNil(cache.stats().lastDiskError)
        XCTAssertEqual(body(diskCache(dir), "https://example.com/a"), "written later")
    }

    func testOrphanedTemporaryFilesAreCleanedByEviction() throws {
        let dir = cacheTemporaryDirectory()
        let cache = diskCache(dir, limit: 10_000, memory: 0)
        put(cache, "https://example.com/a", body: "a")
        let keyDir = try XCTUnwrap(cache.disk?.keyDirectory("GET https://example.com/a"))
        // A temporary file of a process that no longer exists (pid 2^22 - 1 is above Linux's default pid_max
        // on most systems; if it exists, the age rule still holds for the second file).
        _ = FileManager.default.createFile(atPath: keyDir + "/.tmp-4194303-1-1", contents: Data(count: 100))
        _ = FileManager.default.createFile(atPath: keyDir + "/.tmp-\(getpid())-1-1", contents: Data(count: 100))   // ours, in progress
        cache.disk?.evictIfNeeded()
        XCTAssertFalse(FileManager.default.fileExists(atPath: keyDir + "/.tmp-4194303-1-1"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: keyDir + "/.tmp-\(getpid())-1-1"))
    }

    // MARK: several writers

    /// What one writer does to a shared directory: stores, reads (checking what it reads),
    /// purges, with a limit small enough to evict all the time. Bodies carry their own length
    /// and key, so that any mix-up or tear shows.
    static func hammer(_ cache: HTTPCache, seed: Int, rounds: Int) -> [String] {
        var problems: [String] = []
        var state = UInt64(truncatingIfNeeded: seed) &* 6364136223846793005 &+ 1442695040888963407
        func next(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
        for round in 0..<rounds {
            let n = next(40)
            let url = "https://example.com/item/\(n)"
            let req = cacheRequest(url)
            switch next(10) {
            case 0..<5:
                let length = 50 + next(3000)
                let text = "key=\(n);writer=\(seed);round=\(round);" + String(repeating: "z", count: length)
                let r = cacheResponse(200, [("Cache-Control", "max-age=100000"), ("X-Length", String(text.utf8.count)), ("X-Key", String(n))],
                                      body: text, request: req)
                cache.store(request: req, response: r, requestTime: cacheT0, responseTime: cacheT0)
            case 5..<9:
                if let s = cache.lookup(req, now: cacheT0 + 1).stored {
                    let b = s.entry.body.string
                    if !b.hasPrefix("key=\(n);") || s.entry.headers["X-Key"] != String(n) || String(b.utf8.count) != s.entry.headers["X-Length"] {
                        problems.append("bad entry for \(n): \(b.prefix(40))… (\(b.utf8.count) bytes)")
                    }
                }
            default:
                cache.purge(url)
            }
        }
        // What is still queued for the disk writer is written, as a program's exit does
        // (HTTPCache.flushAll): the directory is then checked while nothing is half written.
        cache.flush()
        return problems
    }

    /// After the writers: every file is a whole, valid entry; no temporary file is left; the
    /// index agrees with the files.
    func checkDirectory(_ dir: String, limit: Int, file: StaticString = #filePath, line: UInt = #line) {
        let tier = CacheDiskTier(directory: dir, limit: limit)
        XCTAssertTrue(tier.open(), file: file, line: line)
        let files = cacheEntryFiles(dir)
        XCTAssertGreaterThan(files.count, 0, file: file, line: line)
        var total = 0
        for f in files {
            guard let e = tier.readEntry(dir + "/" + f, withBody: true) else {
                XCTFail("\(f) is not a valid entry", file: file, line: line)
                continue
            }
            XCTAssertEqual(String(e.body.count), e.headers["X-Length"], file: file, line: line)
            XCTAssertTrue(e.body.string.hasPrefix("key=\(e.headers["X-Key"] ?? "?");"), file: file, line: line)
            total += (try? FileManager.default.attributesOfItem(atPath: dir + "/" + f)[.size] as? Int) ?? 0
        }
        XCTAssertEqual(tier.damagedRemoved, 0, file: file, line: line)
        XCTAssertFalse(cacheFiles(dir).contains { $0.contains("/.tmp-") }, file: file, line: line)
        XCTAssertLessThanOrEqual(total, limit, file: file, line: line)
        XCTAssertEqual(tier.usage(), CacheDiskTier.Counter(bytes: total, entries: files.count), "the index agrees with the files", file: file, line: line)
    }

    func testThreadsWithTwoCachesOnOneDirectory() {
        let dir = cacheTemporaryDirectory()
        let limit = 40_000
        // Two instances: each has its own lock descriptor, so they exclude each other as processes do.
        let caches = [diskCache(dir, limit: limit, memory: 0), diskCache(dir, limit: limit, memory: 0)]
        let problems = CacheTestLock<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { w in
            let p = Self.hammer(caches[w % 2], seed: w + 1, rounds: 800)
            problems.withLock { $0 += p }
        }
        XCTAssertEqual(problems.withLock { $0 }, [])
        checkDirectory(dir, limit: limit)
    }

    /// Two real processes (this test binary, run again for `testChildProcessHammer`) and this
    /// one hammer one directory at the same time.
    func testProcessesShareOneDirectory() throws {
        let dir = cacheTemporaryDirectory()
        let limit = 40_000
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var children: [Process] = []
        for seed in [101, 202] {
            let p = Process()
            p.executableURL = exe
            p.arguments = ["LunetCoreTests.CacheDiskTests/testChildProcessHammer"]
            var env = ProcessInfo.processInfo.environment
            env["LUNET_CACHE_HAMMER_DIR"] = dir
            env["LUNET_CACHE_HAMMER_SEED"] = String(seed)
            env["LUNET_CACHE_HAMMER_LIMIT"] = String(limit)
            p.environment = env
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            children.append(p)
        }
        // Everyone starts together: the children wait for this file.
        _ = FileManager.default.createFile(atPath: dir + "/go", contents: nil)
        let mine = Self.hammer(diskCache(dir, limit: limit, memory: 0), seed: 303, rounds: 800)
        for p in children { p.waitUntilExit() }
        XCTAssertEqual(mine, [])
        for p in children { XCTAssertEqual(p.terminationStatus, 0, "a child process found a problem") }
        checkDirectory(dir, limit: limit)
    }

    /// The child side of `testProcessesShareOneDirectory`; does nothing in a normal run.
    func testChildProcessHammer() {
        let env = ProcessInfo.processInfo.environment
        guard let dir = env["LUNET_CACHE_HAMMER_DIR"], let seed = Int(env["LUNET_CACHE_HAMMER_SEED"] ?? ""),
              let limit = Int(env["LUNET_CACHE_HAMMER_LIMIT"] ?? "") else { return }
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: dir + "/go") && Date() < deadline { usleep(1000) }
        XCTAssertEqual(Self.hammer(diskCache(dir, limit: limit, memory: 0), seed: seed, rounds: 800), [])
    }
}

/// A lock for test bookkeeping across threads.
final class CacheTestLock<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

extension CacheDiskTests {
    /// Start-up stays cheap: making a cache touches no file; the first use creates the directory.
    func testNothingIsTouchedBeforeFirstUse() {
        let dir = cacheTemporaryDirectory() + "/later"
        let cache = diskCache(dir)
        try? cache.rule(host: "*.example.com", ttl: 60)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir))
        XCTAssertEqual(cache.lookup(cacheRequest(), now: cacheT0).kind, "miss")
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir + "/v1/index"))
    }

    /// Someone removes the whole directory while the cache is in use: it is made again.
    func testTheDirectoryCanBeRemovedUnderTheCache() throws {
        let dir = cacheTemporaryDirectory()
        let cache = diskCache(dir, memory: 0)
        put(cache, "https://example.com/a", body: "a")
        try FileManager.default.removeItem(atPath: dir)
        XCTAssertNil(body(cache, "https://example.com/a"))
        XCTAssertEqual(put(cache, "https://example.com/b", body: "b"), .stored)
        XCTAssertEqual(body(diskCache(dir, memory: 0), "https://example.com/b"), "b")
        XCTAssertEqual(cache.stats().diskEntries, 1)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir + "/v1/index"))
    }
}
