// fuzz-cache-entry: the HTTP cache's disk-entry reader (CacheDiskTier.readEntry and
// CacheEntryCodec, docs/cache.md) on files with arbitrary bytes. Disk entries are what another
// process, a full disk or a crash may have left half-written; the reader must drop them, never
// crash or serve them.
//
// Input: byte 0 is a control byte, the rest is
//   bit 0 = 0: the whole file, as is (nearly always rejected by the header CRC: tests the
//              header checks);
//   bit 0 = 1: metadata and body (the body is the last (byte0 >> 1) bytes, 0-63 of them)
//              under a header with the right lengths and CRCs, so the metadata decoder runs.
//   bit 7:     a decoded entry is also written back through the tier and read again.
// Properties: no crash; with a valid header, the reader accepts exactly what
// CacheEntryCodec.decodeMetadata accepts; what it accepts encodes to metadata that decodes to
// the same entry; a body read back is the body written; an entry written and read is the same.
@testable import LunetCore
import FuzzSupport
import Glibc

@_cdecl("fuzz_cache_entry_main")
public func main(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    fuzzMain(argc, argv, fuzzCacheEntry)
}

/// One cache directory for the run, under $TMPDIR, removed at exit.
nonisolated(unsafe) private let tier: CacheDiskTier = {
    let base = ProcessEnvironment.tmp + "/lunet-fuzz-cache-XXXXXX"
    var template = Array(base.utf8CString)
    guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
        fuzzFail("mkdtemp failed: \(String(cString: strerror(errno)))")
    }
    let directory = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    let t = CacheDiskTier(directory: directory, limit: 64 << 20, syncWrites: false)
    fuzzCheck(t.open(), "the cache directory does not open: \(t.disabledReason ?? "")")
    cleanupDirectory = directory
    atexit { if let d = cleanupDirectory { _ = system("rm -rf '\(d)'") } }
    return t
}()
nonisolated(unsafe) private var cleanupDirectory: String?
private var path: String { tier.root + "/fuzz-entry" }

private enum ProcessEnvironment {
    static var tmp: String { getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp" }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCacheEntry(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard size > 0, let data else { return 0 }
    let control = data[0]
    let rest = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))

    // The codec in memory, on the bytes as they are.
    _ = CacheEntryCodec.decodeHeader(Array(rest.prefix(CacheEntryCodec.headerSize)), fileSize: rest.count)
    if let e = CacheEntryCodec.decodeMetadata(rest, body: ByteBuffer()) { checkReencodes(e) }

    // A file, read by the tier.
    var file = rest
    var metadata: [UInt8]? = nil
    var body: [UInt8] = []
    if control & 1 == 1 {
        let bodyLength = Swift.min(Int(control >> 1) & 63, rest.count)
        let meta = Array(rest[..<(rest.count - bodyLength)])
        body = Array(rest[(rest.count - bodyLength)...])
        let header = CacheEntryCodec.encodeHeader(.init(metaLength: meta.count, bodyLength: body.count,
                                                        metaCRC: CacheCRC32.checksum(meta), bodyCRC: CacheCRC32.checksum(body)))
        file = header + meta + body
        metadata = meta
    }
    writeFile(path, file)
    let withoutBody = tier.readEntry(path, withBody: false)
    if withoutBody == nil { writeFile(path, file) }     // a rejected file was removed
    let withBody = tier.readEntry(path, withBody: true)
    if let metadata {
        let decodes = CacheEntryCodec.decodeMetadata(metadata, body: ByteBuffer()) != nil
        fuzzCheck((withoutBody != nil) == decodes, "the reader and decodeMetadata disagree (without body)")
        fuzzCheck((withBody != nil) == decodes, "the reader and decodeMetadata disagree (with body)")
    }
    if let e = withoutBody {
        fuzzCheck(e.body.count == 0, "an entry read without its body has one")
        checkReencodes(e)
    }
    if let e = withBody {
        if metadata != nil { fuzzCheck(Array(e.body.bytes) == body, "the body read is not the body written") }
        checkReencodes(e)
        if control & 0x80 != 0 {
            fuzzCheck(tier.write(e), "an entry that was read does not write: \(tier.lastError ?? "")")
            guard let back = tier.readEntry(tier.path(for: e), withBody: true) else { fuzzFail("an entry written does not read back") }
            fuzzCheck(same(e, back), "an entry written reads back different")
            _ = tier.remove(key: e.key)
        }
    }
    unlink(path)
    return 0
}

private func writeFile(_ path: String, _ bytes: [UInt8]) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    fuzzCheck(fd >= 0, "cannot write \(path): \(String(cString: strerror(errno)))")
    defer { close(fd) }
    fuzzCheck(CacheDiskTier.writeAll(fd, bytes), "cannot write \(path)")
}

private func checkReencodes(_ e: CacheEntry) {
    let again = CacheEntryCodec.encodeMetadata(e)
    guard let back = CacheEntryCodec.decodeMetadata(again, body: e.body) else {
        fuzzFail("an accepted entry's metadata, encoded again, does not decode")
    }
    fuzzCheck(same(e, back), "an accepted entry's metadata, encoded again, decodes to another entry")
    fuzzCheck(CacheEntryCodec.encodeMetadata(back) == again, "encodeMetadata is not stable")
}

private func same(_ a: CacheEntry, _ b: CacheEntry) -> Bool {
    a.key == b.key && a.url == b.url && a.status == b.status && a.reason == b.reason && a.httpVersion == b.httpVersion
        && a.headers.fields.map(\.name) == b.headers.fields.map(\.name)
        && a.headers.fields.map(\.value) == b.headers.fields.map(\.value)
        && a.vary == b.vary && a.credential == b.credential
        && a.requestTime.bitPattern == b.requestTime.bitPattern && a.responseTime.bitPattern == b.responseTime.bitPattern
        && Array(a.body.bytes) == Array(b.body.bytes) && a.variant == b.variant
}
