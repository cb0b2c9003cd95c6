import CLunetLua
import LunetLuaStack
import Glibc
import LunetCore

/// The protobuf wire format (https://protobuf.dev/programming-guides/encoding/): the pieces
/// the schemaless codec, the schema codec and the descriptor reader share. No Lua here but
/// the error object push at the end.
enum PBWire {
    static let varint: UInt8 = 0
    static let fixed64: UInt8 = 1
    static let len: UInt8 = 2
    static let startGroup: UInt8 = 3
    static let endGroup: UInt8 = 4
    static let fixed32: UInt8 = 5

    /// The largest field number protobuf allows (2^29 - 1).
    static let maxFieldNumber: UInt64 = 536_870_911
    /// Nested messages allowed by default, as protobuf's own parsers do.
    static let defaultMaxDepth = 100

    enum VarintStatus { case ok, truncated, overflow }

    /// Reads a varint at `p` (which must be before `end`), advancing past it. A varint is at
    /// most ten bytes and the tenth may only carry the 64th bit. On failure `p` is unchanged.
    @inline(__always)
    static func readVarint(_ p: inout UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>, _ value: inout UInt64) -> VarintStatus {
        let b0 = UInt64(p[0])
        if b0 < 0x80 {
            value = b0
            p += 1
            return .ok
        }
        return readLongVarint(&p, end, &value)
    }

    @inline(__always)
    static func readLongVarint(_ p: inout UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>, _ value: inout UInt64) -> VarintStatus {
        var result = UInt64(p[0]) & 0x7F
        var shift: UInt64 = 7
        let available = end - p
        if available >= 10 {
            for i in 1..<10 {
                let b = UInt64(p[i])
                result |= (b & 0x7F) << shift
                if b < 0x80 {
                    if i == 9 && b > 1 { return .overflow }
                    value = result
                    p += i + 1
                    return .ok
                }
                shift += 7
            }
            return .overflow
        }
        var i = 1
        while i < available {
            let b = UInt64(p[i])
            result |= (b & 0x7F) << shift
            if b < 0x80 {
                value = result
                p += i + 1
                return .ok
            }
            shift += 7
            i += 1
        }
        return .truncated
    }

    @inline(__always)
    static func loadFixed64(_ p: UnsafePointer<UInt8>) -> UInt64 {
        UInt64(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt64.self))
    }

    @inline(__always)
    static func loadFixed32(_ p: UnsafePointer<UInt8>) -> UInt32 {
        UInt32(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt32.self))
    }

    @inline(__always)
    static func zigzag(_ v: UInt64) -> Int64 { Int64(bitPattern: (v >> 1) ^ (0 &- (v & 1))) }
    @inline(__always)
    static func zigzag32(_ v: UInt32) -> Int32 { Int32(bitPattern: (v >> 1) ^ (0 &- (v & 1))) }
    @inline(__always)
    static func unzigzag(_ v: Int64) -> UInt64 { UInt64(bitPattern: (v << 1) ^ (v >> 63)) }
    @inline(__always)
    static func unzigzag32(_ v: Int32) -> UInt32 { UInt32(bitPattern: (v << 1) ^ (v >> 31)) }

    @inline(__always)
    static func varintSize(_ v: UInt64) -> Int {
        // 1 + floor(bits / 7), with 0 taking one byte.
        let bits = 64 - (v | 1).leadingZeroBitCount
        return (bits + 6) / 7
    }

    /// The name of a wire type as the docs and the `wire` markers spell it.
    static func name(_ wire: UInt8) -> String {
        switch wire {
        case varint: return "varint"
        case fixed64: return "fixed64"
        case len: return "len"
        case startGroup: return "start group"
        case endGroup: return "end group"
        case fixed32: return "fixed32"
        default: return "\(wire)"
        }
    }

    /// The offset of the first byte that makes `[p, p+n)` invalid UTF-8 (RFC 3629: no overlong
    /// forms, no surrogates, nothing above U+10FFFF), or -1 when it is valid.
    static func invalidUTF8Offset(_ p: UnsafePointer<UInt8>, _ n: Int) -> Int {
        var i = 0
        while i < n {
            if n - i >= 8 {
                let w = UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self)
                if w & 0x8080_8080_8080_8080 == 0 {
                    i += 8
                    continue
                }
            }
            let c = p[i]
            if c < 0x80 {
                i += 1
                continue
            }
            @inline(__always) func cont(_ k: Int) -> Bool { i + k < n && p[i + k] & 0xC0 == 0x80 }
            switch c {
            case 0xC2...0xDF:
                guard cont(1) else { return i + 1 < n ? i + 1 : i }
                i += 2
            case 0xE0...0xEF:
                let lo: UInt8 = c == 0xE0 ? 0xA0 : 0x80
                let hi: UInt8 = c == 0xED ? 0x9F : 0xBF
                guard i + 1 < n else { return i }
                guard p[i + 1] >= lo && p[i + 1] <= hi else { return i + 1 }
                guard cont(2) else { return i + 2 < n ? i + 2 : i }
                i += 3
            case 0xF0...0xF4:
                let lo: UInt8 = c == 0xF0 ? 0x90 : 0x80
                let hi: UInt8 = c == 0xF4 ? 0x8F : 0xBF
                guard i + 1 < n else { return i }
                guard p[i + 1] >= lo && p[i + 1] <= hi else { return i + 1 }
                guard cont(2) else { return i + 2 < n ? i + 2 : i }
                guard cont(3) else { return i + 3 < n ? i + 3 : i }
                i += 4
            default:
                return i
            }
        }
        return -1
    }
}
