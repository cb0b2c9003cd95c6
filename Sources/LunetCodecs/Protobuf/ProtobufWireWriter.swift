import Glibc

/// A growable byte buffer on the C heap: what the encoders write into.
typealias PBWriter = ByteWriter

/// Protobuf's wire primitives on the shared codec buffer.
extension ByteWriter {
    @inline(__always)
    mutating func varint(_ v: UInt64) {
        let o = reserve(10)
        var v = v
        var i = 0
        while v >= 0x80 {
            o[i] = UInt8(truncatingIfNeeded: v) | 0x80
            v >>= 7
            i += 1
        }
        o[i] = UInt8(truncatingIfNeeded: v)
        count += i + 1
    }

    @inline(__always)
    mutating func tag(_ field: UInt64, _ wire: UInt8) {
        varint(field << 3 | UInt64(wire))
    }

    @inline(__always)
    mutating func fixed64(_ v: UInt64) {
        UnsafeMutableRawPointer(reserve(8)).storeBytes(of: v.littleEndian, as: UInt64.self)
        count += 8
    }

    @inline(__always)
    mutating func fixed32(_ v: UInt32) {
        UnsafeMutableRawPointer(reserve(4)).storeBytes(of: v.littleEndian, as: UInt32.self)
        count += 4
    }

    @inline(__always)
    mutating func bytes(_ p: UnsafeRawPointer?, _ n: Int) {
        varint(UInt64(n))
        guard n > 0 else { return }
        reserve(n).update(from: p!.assumingMemoryBound(to: UInt8.self), count: n)
        count += n
    }

    /// Starts a length-delimited value whose length is not known yet: one byte is kept for
    /// the length. Returns where the content starts, for `endLength`.
    @inline(__always)
    mutating func beginLength() -> Int {
        _ = reserve(1)
        count += 1
        return count
    }

    /// Writes the length of the content since `mark`, moving the content when the length needs
    /// more than the one byte kept.
    @inline(__always)
    mutating func endLength(_ mark: Int) {
        let n = count - mark
        if n < 0x80 {
            base.unsafelyUnwrapped[mark - 1] = UInt8(n)
            return
        }
        moveForLength(mark, n)
    }

    @inline(never)
    mutating func moveForLength(_ mark: Int, _ n: Int) {
        let size = PBWire.varintSize(UInt64(n))
        _ = reserve(size - 1)
        let b = base.unsafelyUnwrapped
        memmove(b + mark - 1 + size, b + mark, n)
        var v = UInt64(n)
        var i = mark - 1
        while v >= 0x80 {
            b[i] = UInt8(truncatingIfNeeded: v) | 0x80
            v >>= 7
            i += 1
        }
        b[i] = UInt8(truncatingIfNeeded: v)
        count += size - 1
    }

}
