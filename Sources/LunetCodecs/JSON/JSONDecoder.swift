import CLunetLua
import LunetCore


/// JSON text (RFC 8259, UTF-8) decoded straight onto a Lua stack: no Swift value tree, no Swift
/// strings, no allocation per value. Keys and strings are pushed with `lua_pushlstring` from the
/// input itself; only a string with escapes goes through a scratch buffer reused for the whole
/// document.
///
/// The mapping (docs/json.md has the full rules):
/// - object → plain table; array → table with the `json.array` metatable; null → `json.null`;
/// - a number without fraction or exponent that fits in 64 bits → Lua integer; any other number
///   → float; a number whose magnitude overflows a double → error;
/// - `\u` escapes → UTF-8; a surrogate pair → one code point; a lone surrogate → error;
/// - invalid UTF-8 anywhere → error; a UTF-8 byte order mark at the very start is skipped;
/// - more than `maxDepth` nested arrays/objects → error (the parser is iterative: the limit,
///   not the C stack, is what stops deep input); anything after the value but whitespace → error.
///
/// Never raises: every Lua call it makes is a push or a raw table access.
public enum LuaJSONDecoder {
    public static let defaultMaxDepth = 1000

    /// Decodes `bytes` and pushes the value (returns 1), or pushes a `decode` error object with
    /// `message`, `position` (1-based byte offset), `line` and `column` (returns LUNET_RAISE).
    /// Either way the stack ends exactly one value above where it was.
    public static func decode(_ L: OpaquePointer, _ bytes: UnsafeRawBufferPointer, maxDepth: Int = 1000) -> Int32 {
        let base = lua_gettop(L)
        guard lua_checkstack(L, 8) != 0 else {
            pushError(L, bytes, offset: 0, .luaStackExhausted)
            return LUNET_RAISE
        }
        // Slots base+1 and base+2 hold json.null and the array metatable while parsing.
        JSONRegistry.pushNull(L)
        JSONRegistry.pushArrayMetatable(L)

        let count = bytes.count
        guard count > 0, let raw = bytes.baseAddress else {
            lua_settop(L, base)
            pushError(L, bytes, offset: 0, .emptyInput)
            return LUNET_RAISE
        }
        let start = raw.assumingMemoryBound(to: UInt8.self)
        var parser = JSONParser(L: L, start: start, end: start + count, nullIndex: base + 1,
                                arrayMetatableIndex: base + 2, maxDepth: max(1, maxDepth))
        let ok = parser.parseDocument()
        let failure = parser.failure
        parser.release()
        return TextDecodeError.finish(L, base: base, ok: ok, codec: "JSON", { failure.text }, bytes, offset: parser.failureOffset)
    }

    /// Pushes the decode error object: "JSON: <problem> at line L, column C (byte B)".
    static func pushError(_ L: OpaquePointer, _ bytes: UnsafeRawBufferPointer, offset: Int, _ problem: Problem) {
        TextDecodeError.push(L, codec: "JSON", problem.text, bytes, offset: offset)
    }
}
