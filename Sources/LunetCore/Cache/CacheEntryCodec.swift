/// The bytes of a disk entry (format version 1). All integers little-endian.
///
///     offset size
///      0     4   magic "LNHC"
///      4     2   format version (1)
///      6     2   reserved (0)
///      8     4   metadata length M (at most 16 MiB)
///     12     8   body length B
///     20     4   CRC-32 of the metadata
///     24     4   CRC-32 of the body
///     28     4   CRC-32 of bytes 0..<28
///     32     M   metadata
///     32+M   B   body
///
/// A file is an entry only if its size is exactly 32 + M + B and every CRC matches.
/// Metadata, in order: key, url, status (u16), reason, HTTP version, request time and response
/// time (f64 bit patterns), credential digest, vary count (u32) then per field its name, a
/// presence byte and its value, header count (u32) then per field name and value. Strings are
/// a u32 length and UTF-8 bytes. Decoding checks every length against the bytes left, and
/// must end exactly at the end of the metadata.
enum CacheEntryCodec {
    static let magic: [UInt8] = [0x4C, 0x4E, 0x48, 0x43]        // "LNHC"
    static let version: UInt16 = 1
    static let headerSize = 32
    static let maxMetadata = 16 << 20

    struct Header: Equatable {
        var metaLength: Int
        var bodyLength: Int
        var metaCRC: UInt32
        var bodyCRC: UInt32
    }

    static func encodeHeader(_ h: Header) -> [UInt8] {
        var w = Writer()
        w.bytes.append(contentsOf: magic)
        w.u16(version)
        w.u16(0)
        w.u32(UInt32(clamping: h.metaLength))
        w.u64(UInt64(clamping: h.bodyLength))
        w.u32(h.metaCRC)
        w.u32(h.bodyCRC)
        w.u32(CacheCRC32.checksum(w.bytes))
        return w.bytes
    }

    /// nil when the 32 bytes are not a version-1 header of a file of `fileSize` bytes.
    static func decodeHeader(_ b: [UInt8], fileSize: Int) -> Header? {
        guard b.count == headerSize, Array(b[0..<4]) == magic else { return nil }
        var r = Reader(bytes: b, at: 4)
        guard let v = r.u16(), v == version, r.u16() != nil,
              let m = r.u32(), let body = r.u64(), let mc = r.u32(), let bc = r.u32(), let hc = r.u32(),
              hc == CacheCRC32.checksum(Array(b[0..<28])) else { return nil }
        guard Int(m) <= maxMetadata, body <= UInt64(Int.max / 2), fileSize >= headerSize,
              UInt64(fileSize - headerSize) == UInt64(m) + body else { return nil }
        return Header(metaLength: Int(m), bodyLength: Int(body), metaCRC: mc, bodyCRC: bc)
    }

    /// The metadata of `entry` (everything but the body).
    static func encodeMetadata(_ e: CacheEntry) -> [UInt8] {
        var w = Writer()
        w.string(e.key)
        w.string(e.url)
        w.u16(UInt16(clamping: e.status))
        w.string(e.reason)
        w.string(e.httpVersion)
        w.u64(e.requestTime.bitPattern)
        w.u64(e.responseTime.bitPattern)
        w.string(e.credential)
        w.u32(UInt32(clamping: e.vary.count))
        for f in e.vary {
            w.string(f.name)
            w.bytes.append(f.value == nil ? 0 : 1)
            w.string(f.value ?? "")
        }
        w.u32(UInt32(clamping: e.headers.count))
        for f in e.headers {
            w.string(f.name)
            w.string(f.value)
        }
        return w.bytes
    }

    /// An entry with `body` from metadata bytes, or nil when they are malformed.
    static func decodeMetadata(_ b: [UInt8], body: ByteBuffer) -> CacheEntry? {
        var r = Reader(bytes: b, at: 0)
        guard let key = r.string(), let url = r.string(), let status = r.u16(), let reason = r.string(),
              let version = r.string(), let rq = r.u64(), let rs = r.u64(), let credential = r.string(),
              let varyCount = r.u32(), Int(varyCount) <= r.remaining / 9 else { return nil }
        var vary: [CacheVaryField] = []
        for _ in 0..<Int(varyCount) {
            guard let name = r.string(), let present = r.u8(), present <= 1, let value = r.string() else { return nil }
            vary.append(CacheVaryField(name: name, value: present == 1 ? value : nil))
        }
        guard let headerCount = r.u32(), Int(headerCount) <= r.remaining / 8 else { return nil }
        var headers = HTTPHeaders()
        for _ in 0..<Int(headerCount) {
            guard let name = r.string(), let value = r.string() else { return nil }
            headers.add(name, value)
        }
        let requestTime = Double(bitPattern: rq), responseTime = Double(bitPattern: rs)
        guard r.remaining == 0, requestTime.isFinite, responseTime.isFinite, key.hasPrefix("GET ") else { return nil }
        return CacheEntry(key: key, url: url, status: Int(status), reason: reason, httpVersion: version, headers: headers,
                          body: body, vary: vary, credential: credential, requestTime: requestTime, responseTime: responseTime)
    }

    struct Writer {
        var bytes: [UInt8] = []
        mutating func u8(_ v: UInt8) { bytes.append(v) }
        mutating func u16(_ v: UInt16) { for s in [0, 8] { bytes.append(UInt8(truncatingIfNeeded: v >> UInt16(s))) } }
        mutating func u32(_ v: UInt32) { for s in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt32(s))) } }
        mutating func u64(_ v: UInt64) { for s in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(s))) } }
        mutating func string(_ s: String) {
            u32(UInt32(clamping: s.utf8.count))     // a longer string makes metadata that fails to decode, never a trap
            bytes.append(contentsOf: s.utf8)
        }
    }

    struct Reader {
        let bytes: [UInt8]
        var at: Int
        var remaining: Int { bytes.count - at }

        mutating func u8() -> UInt8? {
            guard remaining >= 1 else { return nil }
            defer { at += 1 }
            return bytes[at]
        }
        mutating func u16() -> UInt16? {
            guard remaining >= 2 else { return nil }
            defer { at += 2 }
            return UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
        }
        mutating func u32() -> UInt32? {
            guard remaining >= 4 else { return nil }
            var v: UInt32 = 0
            for k in 0..<4 { v |= UInt32(bytes[at + k]) << UInt32(8 * k) }
            at += 4
            return v
        }
        mutating func u64() -> UInt64? {
            guard remaining >= 8 else { return nil }
            var v: UInt64 = 0
            for k in 0..<8 { v |= UInt64(bytes[at + k]) << UInt64(8 * k) }
            at += 8
            return v
        }
        mutating func string() -> String? {
            guard let n = u32(), Int(n) <= remaining else { return nil }
            defer { at += Int(n) }
            return String(decoding: bytes[at..<at + Int(n)], as: UTF8.self)
        }
    }
}
