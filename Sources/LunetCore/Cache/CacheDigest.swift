/// Checksums and digests the cache needs, written here so that the core links nothing more.
///
/// - `CacheCRC32`: CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, the one zlib and PNG
///   use), eight bytes a step. It guards every disk entry against damage.
/// - `CacheSHA256`: names files (so that keys need no escaping) and turns credentials into
///   digests, so that no secret is ever written to the cache directory.
enum CacheCRC32 {
    /// Eight tables of 256 entries: table 0 is the classic byte-at-a-time table, table k gives
    /// the CRC of a byte followed by k zero bytes.
    static let tables: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0xEDB8_8320 : c >> 1 }
            t[i] = c
        }
        for k in 1..<8 {
            for i in 0..<256 {
                let previous = t[(k - 1) * 256 + i]
                t[k * 256 + i] = (previous >> 8) ^ t[Int(previous & 0xFF)]
            }
        }
        return t
    }()

    /// The CRC of `bytes`, continuing from `crc` (0 to start).
    static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var c = ~crc
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        let p = base.assumingMemoryBound(to: UInt8.self)
        var i = 0
        let n = bytes.count
        tables.withUnsafeBufferPointer { t in
            while n - i >= 8 {
                let lo = c ^ (UInt32(p[i]) | UInt32(p[i + 1]) << 8 | UInt32(p[i + 2]) << 16 | UInt32(p[i + 3]) << 24)
                let hi = UInt32(p[i + 4]) | UInt32(p[i + 5]) << 8 | UInt32(p[i + 6]) << 16 | UInt32(p[i + 7]) << 24
                c = t[7 * 256 + Int(lo & 0xFF)] ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((lo >> 16) & 0xFF)] ^ t[4 * 256 + Int(lo >> 24)]
                    ^ t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
                i += 8
            }
            while i < n {
                c = (c >> 8) ^ t[Int((c ^ UInt32(p[i])) & 0xFF)]
                i += 1
            }
        }
        return ~c
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { update(0, $0) }
    }
}

/// Digests that name files and stand for credentials: SHA-256 (the module's `SHA256`) in
/// lower-case hex, cut to `bytes` bytes.
enum CacheSHA256 {
    static func hex(_ string: String, bytes: Int = 32) -> String {
        var s = SHA256()
        s.update(Array(string.utf8))
        return String(s.finalize().prefix(2 * bytes))
    }
}
