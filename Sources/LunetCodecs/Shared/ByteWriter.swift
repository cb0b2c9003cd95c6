import CLunetLua
import Glibc
import LunetCore
import LunetLuaStack

/// A growable byte buffer on the C heap, written through raw pointers: what every encoder
/// (JSON, XML, protobuf) writes into, and the decoders' scratch for text they cannot push
/// straight from the input. No Swift allocation or bounds check per byte.
struct ByteWriter {
    var base: UnsafeMutablePointer<UInt8>? = nil
    var count = 0
    var capacity = 0
    /// Named in the message when memory runs out.
    var owner: StaticString = "an encoder"
    /// Set when the memory for the output ran out: the encoder still walks its value to the
    /// end (its writes go to a scratch block, overwritten), and the Lua function then raises
    /// "not enough memory" (pushResult) where it used to stop the process.
    var outOfMemory = false

    /// Room for `n` more bytes; returns where the next byte goes.
    @inline(__always)
    mutating func reserve(_ n: Int) -> UnsafeMutablePointer<UInt8> {
        if capacity - count < n { grow(n) }
        return base.unsafelyUnwrapped + count
    }

    @inline(never)
    mutating func grow(_ n: Int) {
        if outOfMemory {   // writing into the scratch block: from its start again
            count = 0
            if capacity >= n { return }
        }
        let newCapacity = outOfMemory ? max(n, 1024) : max(count + n, capacity * 2, 1024)
        if let grown = realloc(base, newCapacity) {
            base = grown.assumingMemoryBound(to: UInt8.self)
            capacity = newCapacity
            return
        }
        // The output does not fit: what was written is given back, and a block of this one
        // write's size takes the rest of the walk.
        free(base)
        outOfMemory = true
        count = 0
        guard let scratch = malloc(max(n, 1024)) else { codecOutOfMemory(owner) }
        base = scratch.assumingMemoryBound(to: UInt8.self)
        capacity = max(n, 1024)
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1).pointee = byte
        count += 1
    }

    @inline(__always)
    mutating func append(_ p: UnsafePointer<UInt8>, _ n: Int) {
        reserve(n).update(from: p, count: n)
        count += n
    }

    /// The code point `u` as UTF-8.
    @inline(__always)
    mutating func appendUTF8(_ u: UInt32) {
        count += UTF8Sequence.write(u, to: reserve(4))
    }

    @inline(__always)
    mutating func append(_ s: StaticString) {
        append(s.utf8Start, s.utf8CodeUnitCount)
    }

    /// A line feed and two spaces per level: the pretty forms of the JSON and XML encoders.
    @inline(__always)
    mutating func newline(indent level: Int) {
        let o = reserve(1 + 2 * level)
        o.pointee = 0x0A
        (o + 1).initialize(repeating: 0x20, count: 2 * level)
        count += 1 + 2 * level
    }

    mutating func release() {
        free(base)
        base = nil
        count = 0
        capacity = 0
    }
}

extension ByteWriter {
    /// The output as the Lua function's result: pushed under a protected call of its own when
    /// it is large (its allocation can fail), or "not enough memory" raised (kind too_large)
    /// when the output or its string did not fit. Returns the Lua function's status.
    func pushResult(_ L: OpaquePointer) -> Int32 {
        if !outOfMemory {
            if count < 1 << 20 {
                lunet_pushbytes(L, base, count)
                return 1
            }
            if lunet_protected_pushlstring(L, UnsafeRawPointer(base!).assumingMemoryBound(to: CChar.self), count) == LUA_OK { return 1 }
        }
        LuaErrorObject.push(L, LunetError(.tooLarge, "not enough memory for \(owner)'s output (\(count) bytes and more)"))
        return LUNET_RAISE
    }

    /// The encoders' Swift entry points: `body` writes into a fresh writer, and what it wrote
    /// is appended to `out`; on failure `out` is left as it was and the error returned.
    static func encode(into out: ByteBuffer, _ body: (inout ByteWriter) -> LunetError?) -> LunetError? {
        var writer = ByteWriter()
        defer { writer.release() }
        if let error = body(&writer) { return error }
        if writer.outOfMemory { return LunetError(.tooLarge, "not enough memory for \(writer.owner)'s output") }
        if writer.count > 0 { out.append(writer.base!, writer.count) }
        return nil
    }
}
