import CLunetLua
import LunetLuaStack

/// The error object of a text decoder (JSON, XML): "<codec>: <problem> at line L, column C
/// (byte B)", with `position` (B, 1-based), `line` and `column` as fields. Lines and columns
/// are counted only when a decode fails: the parsers never track them.
enum TextDecodeError {
    /// Line and column (1-based; columns count characters, not bytes) of a byte offset.
    static func lineColumn(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for i in 0..<min(max(offset, 0), bytes.count) {
            let b = bytes[i]
            if b == 0x0A {
                line += 1
                column = 1
            } else if b & 0xC0 != 0x80 {
                column += 1     // a character starts here (UTF-8 continuation bytes do not count)
            }
        }
        return (line, column)
    }

    /// The end of a decode that kept working slots from `base` + 1: on success the value on
    /// top takes the first slot and the rest go (returns 1); on failure the stack goes back to
    /// `base` and the error object for `problem` is pushed (returns LUNET_RAISE). Either way
    /// the stack ends exactly one value above `base`.
    static func finish(_ L: OpaquePointer, base: Int32, ok: Bool, codec: String, _ problem: () -> String,
                       _ bytes: UnsafeRawBufferPointer, offset: Int) -> Int32 {
        if ok {
            lunet_replace(L, base + 1)
            lua_settop(L, base + 1)
            return 1
        }
        lua_settop(L, base)
        push(L, codec: codec, problem(), bytes, offset: offset)
        return LUNET_RAISE
    }

    /// Pushes the error object for `problem` (the text of the message) at byte `offset`.
    static func push(_ L: OpaquePointer, codec: String, _ problem: String, _ bytes: UnsafeRawBufferPointer, offset: Int) {
        let (line, column) = lineColumn(bytes, offset)
        let position = offset + 1
        LuaErrorObject.push(L, .decode, "\(codec): \(problem) at line \(line), column \(column) (byte \(position))")
        let s = LuaStack(L)
        s.set(-1, "position", position)
        s.set(-1, "line", line)
        s.set(-1, "column", column)
    }
}
