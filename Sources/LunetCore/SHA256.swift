import Glibc

/// SHA-256 (FIPS 180-4), streaming. Downloads check `sha256 = "..."` with it before a file gets
/// its final name.
public struct SHA256 {
    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
        (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)
    private var block = [UInt8](repeating: 0, count: 64)
    private var blockCount = 0
    private var length: UInt64 = 0


    public init() {}

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var p = bytes.startIndex
        length &+= UInt64(bytes.count)
        while p < bytes.endIndex {
            if blockCount == 0 && bytes.endIndex - p >= 64 {
                compress(UnsafeRawBufferPointer(rebasing: bytes[p..<p + 64]))
                p += 64
                continue
            }
            let n = min(64 - blockCount, bytes.endIndex - p)
            for i in 0..<n { block[blockCount + i] = bytes[p + i] }
            blockCount += n
            p += n
            if blockCount == 64 {
                block.withUnsafeBytes { compress($0) }
                blockCount = 0
            }
        }
    }

    public mutating func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    /// The digest as 64 lowercase hex digits.
    public mutating func finalize() -> String {
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for b in digest() {
            out.append(hex[Int(b >> 4)])
            out.append(hex[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The digest as 32 bytes.
    public mutating func digest() -> [UInt8] {
        let bits = length &* 8
        var tail: [UInt8] = [0x80]
        let padding = (blockCount + 1 <= 56) ? 56 - (blockCount + 1) : 120 - (blockCount + 1)
        tail += [UInt8](repeating: 0, count: padding)
        for i in (0..<8).reversed() { tail.append(UInt8(truncatingIfNeeded: bits >> (UInt64(i) * 8))) }
        let saved = length
        update(tail)
        length = saved
        let words = [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7]
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for w in words { for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: w >> UInt32(shift))) } }
        return out
    }

    /// HMAC-SHA256 (RFC 2104) of `message` under `key`: what SigV4 derives its keys and
    /// signature with.
    public static func hmac(key: [UInt8], _ message: [UInt8]) -> [UInt8] {
        var k = key
        if k.count > 64 {
            var h = SHA256()
            h.update(k)
            k = h.digest()
        }
        k += [UInt8](repeating: 0, count: 64 - k.count)
        var inner = SHA256()
        inner.update(k.map { $0 ^ 0x36 })
        inner.update(message)
        var outer = SHA256()
        outer.update(k.map { $0 ^ 0x5c })
        outer.update(inner.digest())
        return outer.digest()
    }

    private mutating func compress(_ chunk: UnsafeRawBufferPointer) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            compress(chunk, schedule: w)
        }
    }

    private mutating func compress(_ chunk: UnsafeRawBufferPointer, schedule w: UnsafeMutableBufferPointer<UInt32>) {
        for i in 0..<16 {
            w[i] = UInt32(chunk[i * 4]) << 24 | UInt32(chunk[i * 4 + 1]) << 16 | UInt32(chunk[i * 4 + 2]) << 8 | UInt32(chunk[i * 4 + 3])
        }
        for i in 16..<64 {
            let s0 = w[i - 15].rotatedRight(7) ^ w[i - 15].rotatedRight(18) ^ (w[i - 15] >> 3)
            let s1 = w[i - 2].rotatedRight(17) ^ w[i - 2].rotatedRight(19) ^ (w[i - 2] >> 10)
            w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
        }
        var (a, b, c, d, e, f, g, h) = state
        for i in 0..<64 {
            let s1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
            let ch = (e & f) ^ (~e & g)
            let t1 = h &+ s1 &+ ch &+ sha256Constants[i] &+ w[i]
            let s0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
            let maj = (a & b) ^ (a & c) ^ (b & c)
            let t2 = s0 &+ maj
            h = g; g = f; f = e; e = d &+ t1; d = c; c = b; b = a; a = t1 &+ t2
        }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f, state.6 &+ g, state.7 &+ h)
    }

    /// The digest of a file's contents, read in 1 MB chunks; nil when it cannot be read.
    public static func file(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var hasher = SHA256()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer.baseAddress, buffer.count)
            if n < 0 { return nil }
            if n == 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
        return hasher.finalize()
    }
}

extension UInt32 {
    @inline(__always) func rotatedRight(_ n: UInt32) -> UInt32 { (self >> n) | (self << (32 - n)) }
}

/// The round constants, as a fixed buffer (no array bounds checks or retains in the hot loop).
nonisolated(unsafe) private let sha256Constants: UnsafeMutableBufferPointer<UInt32> = {
    let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]
    let buffer = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: 64)
    _ = buffer.initialize(from: k)
    return buffer
}()
