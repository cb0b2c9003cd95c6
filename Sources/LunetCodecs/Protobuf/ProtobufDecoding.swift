import CLunetLua
import Glibc

/// Where a protobuf decoder reads, and its first failure. The reads that name what they were
/// reading when they fail live here, on a concrete type: the hot loops of both decoders call
/// them, and through a protocol each access to the position went through an accessor (22%
/// more instructions for a schemaless decode). They are @_transparent because the decoders'
/// loops are large enough that the optimiser left @inline(__always) ones as calls (a call per
/// field, 4% more instructions).
struct PBCursor {
    var p: UnsafePointer<UInt8>
    var failure: PBProblem? = nil
    var failureAt: UnsafePointer<UInt8>

    init(_ start: UnsafePointer<UInt8>) {
        p = start
        failureAt = start
    }

    @inline(never)
    mutating func fail(_ problem: PBProblem, at q: UnsafePointer<UInt8>) -> Bool {
        failure = problem
        failureAt = q
        return false
    }

    /// At a field's tag: reads it and checks the field number (each decoder checks the wire
    /// type against what it accepts). Nil after failing.
    @_transparent
    mutating func readTag(_ end: UnsafePointer<UInt8>) -> (number: UInt64, wire: UInt8)? {
        let tagAt = p
        var tag: UInt64 = 0
        switch PBWire.readVarint(&p, end, &tag) {
        case .ok: break
        case .truncated: _ = fail(.truncatedVarint("a field tag"), at: tagAt); return nil
        case .overflow: _ = fail(.varintOverflow("a field tag"), at: tagAt); return nil
        }
        let number = tag >> 3
        guard number != 0 else { _ = fail(.fieldNumberZero, at: tagAt); return nil }
        guard number <= PBWire.maxFieldNumber else { _ = fail(.fieldNumberTooLarge(number), at: tagAt); return nil }
        return (number, UInt8(truncatingIfNeeded: tag & 7))
    }

    @_transparent
    mutating func readVarint(_ end: UnsafePointer<UInt8>, _ what: @autoclosure () -> String, _ v: inout UInt64) -> Bool {
        guard p < end else { return fail(.truncatedVarint(what()), at: p) }
        let at = p
        switch PBWire.readVarint(&p, end, &v) {
        case .ok: return true
        case .truncated: return fail(.truncatedVarint(what()), at: at)
        case .overflow: return fail(.varintOverflow(what()), at: at)
        }
    }

    /// A length at p, checked against `end`.
    @_transparent
    mutating func readLength(_ end: UnsafePointer<UInt8>, _ field: UInt64, _ n: inout Int) -> Bool {
        let at = p
        var length: UInt64 = 0
        guard readVarint(end, "the length of field \(field)", &length) else { return false }
        let left = end - p
        guard length <= UInt64(left) else { return fail(.lengthPastEnd(length, left), at: at) }
        n = Int(length)
        return true
    }
}

/// What the two decoders (without and with a schema) share besides the cursor: an explicit
/// stack of open messages on the C heap, so nesting costs heap and never C stack.
protocol PBDecoding {
    associatedtype Frame
    var frames: UnsafeMutablePointer<Frame>? { get set }
    var frameCapacity: Int { get set }
    var cursor: PBCursor { get set }
}

extension PBDecoding {
    mutating func release() {
        free(frames)
        frames = nil
    }

    @inline(__always)
    mutating func growFrames() {
        // Through locals: the two are properties of one value, which two inout arguments
        // cannot both hold.
        var storage = frames
        var capacity = frameCapacity
        growStorage(&storage, &capacity, minimum: 16, "the protobuf codec")
        frames = storage
        frameCapacity = capacity
    }

    /// The end of a decode: the message's table stays (returns 1), or the stack goes back to
    /// `base` and the error object is pushed (returns LUNET_RAISE). Frees the frames.
    mutating func finish(_ L: OpaquePointer, ok: Bool, base: Int32, start: UnsafePointer<UInt8>) -> Int32 {
        let failure = cursor.failure
        let offset = cursor.failureAt - start
        release()
        if ok {
            lua_settop(L, base + 1)
            return 1
        }
        lua_settop(L, base)
        pbPushDecodeError(L, failure ?? .other("cannot decode"), offset: offset)
        return LUNET_RAISE
    }
}
