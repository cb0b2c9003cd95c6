import CLunet
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

/// What went wrong while decoding, named for the message "protobuf: <problem> at byte B".
enum PBProblem {
    case truncatedVarint(String)
    case varintOverflow(String)
    case truncatedFixed(Int, String)
    case lengthPastEnd(UInt64, Int)
    case invalidWireType(UInt8, UInt64)
    case fieldNumberZero
    case fieldNumberTooLarge(UInt64)
    case group(UInt64)
    case endGroup(UInt64)
    case tooDeep(Int)
    case luaStackFull
    case invalidUTF8(String, UInt8)
    case other(String)

    var text: String {
        switch self {
        case .truncatedVarint(let what): return "truncated varint (\(what))"
        case .varintOverflow(let what): return "varint longer than 64 bits (\(what))"
        case .truncatedFixed(let n, let what): return "truncated \(n * 8)-bit value (\(what): \(n) bytes needed)"
        case .lengthPastEnd(let length, let left):
            return "length \(length) past the end of the message (\(left) byte\(left == 1 ? "" : "s") left)"
        case .invalidWireType(let wire, let field): return "invalid wire type \(wire) (field \(field))"
        case .fieldNumberZero: return "invalid field number 0"
        case .fieldNumberTooLarge(let n): return "field number \(n) out of range (the largest is 536870911)"
        case .group(let field): return "group (wire type 3, field \(field)) not supported: groups are deprecated"
        case .endGroup(let field): return "unexpected end of group (wire type 4, field \(field))"
        case .tooDeep(let n): return "nesting too deep (more than \(n) levels of messages)"
        case .luaStackFull: return "nesting too deep for the Lua stack"
        case .invalidUTF8(let field, let byte): return "invalid UTF-8 (byte \(PBText.hex(byte))) in string field \(field)"
        case .other(let text): return text
        }
    }
}

enum PBText {
    static func hex(_ c: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return "0x" + String(digits[Int(c >> 4)]) + String(digits[Int(c & 15)])
    }

    /// A Lua string quoted for a message: printable ASCII as is, other bytes as \xHH, cut at 60.
    static func quote(_ p: UnsafePointer<UInt8>, _ n: Int) -> String {
        var text = "\""
        for i in 0..<min(n, 60) {
            let b = p[i]
            switch b {
            case UInt8(ascii: "\""): text += "\\\""
            case UInt8(ascii: "\\"): text += "\\\\"
            case 0x20..<0x7F: text.unicodeScalars.append(Unicode.Scalar(b))
            default: text += "\\x" + String(hex(b).dropFirst(2))
            }
        }
        return text + "\"" + (n > 60 ? "…" : "")
    }

    static func isIdentifier(_ p: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        guard n > 0, !(p[0] >= UInt8(ascii: "0") && p[0] <= UInt8(ascii: "9")) else { return false }
        for i in 0..<n {
            let b = p[i]
            guard (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
                || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: "_") else { return false }
        }
        return true
    }
}

/// Pushes the decode error object: "protobuf: <problem> at byte B", with `position` = B
/// (1-based).
func pbPushDecodeError(_ L: OpaquePointer, _ problem: PBProblem, offset: Int) {
    let position = offset + 1
    LuaErrorObject.push(L, .decode, "protobuf: \(problem.text) at byte \(position)")
    LuaStack(L).set(-1, "position", position)
}

@inline(never)
func pbOutOfMemory() -> Never {
    let message: StaticString = "lunet: out of memory in the protobuf codec; stopping\n"
    _ = write(2, message.utf8Start, message.utf8CodeUnitCount)
    abort()
}

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
