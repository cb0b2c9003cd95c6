import CLunetLua
import LunetCore

/// Lua values encoded straight into JSON bytes: no Swift value tree, no Swift string per value.
///
/// The rules (docs/json.md has them with examples):
/// - string → JSON string: `"` `\` and control characters escaped (`\n` `\r` `\t` `\b` `\f`,
///   the others as `\u00XX`), "/" and non-ASCII UTF-8 passed through; invalid UTF-8 → error;
/// - integer → its digits; float → the shortest text that reads back as the same double
///   (`0.1`, `1.0`, `1e+16`), so integers and floats keep their Lua subtype through a round
///   trip; NaN and ±infinity → error; boolean → true/false; `json.null` → null;
/// - a table with the `json.array` metatable → array (`[]` when empty); a table whose keys are
///   exactly 1..n → array; an empty plain table → `{}`; a table with string keys → object;
///   string and integer keys together → error ("both string and integer keys"); positive
///   integer keys with holes → error ("sparse array"); any other key (0, negative, 1.5, a
///   boolean...) → error; other metatables are ignored (tables are read raw);
/// - functions, userdata (but `json.null`), threads → error; a table that contains itself, or
///   nesting deeper than 1000 levels → error. Errors name the path: `$.a.b[2]`.
/// - options: `pretty` (two-space indent, ": ", a newline per element), `sortKeys` (object keys
///   in byte order; otherwise in `next` order).
///
/// Never raises: raw table access, lua_next, pushes and lua_checkstack only.
public enum LuaJSONEncoder {
    public struct Options: Sendable {
        public var pretty = false
        public var sortKeys = false
        public init() {}
    }

    public static let maxDepth = 1000

    /// Appends the JSON text of the value at `index` to `out`, or returns an `argument` error
    /// (and leaves `out` as it was). The Lua stack is left as it was.
    public static func encode(_ L: OpaquePointer, index: Int32, options: Options, into out: ByteBuffer) -> LunetError? {
        ByteWriter.encode(into: out) { encode(L, index: index, options: options, writer: &$0) }
    }

    /// Appends to the codec's own growable buffer (json.encode pushes it as a string from
    /// there); on failure the buffer is as it was.
    static func encode(_ L: OpaquePointer, index: Int32, options: Options, writer: inout JSONWriter) -> LunetError? {
        let top = lua_gettop(L)
        let value = lua_absindex(L, index)
        guard lua_checkstack(L, 8) != 0 else { return LunetError(.argument, "cannot encode: the Lua stack is full") }
        JSONRegistry.pushNull(L)
        JSONRegistry.pushArrayMetatable(L)
        var encoder = JSONEncoderState(L: L, options: options, nullIndex: top + 1, arrayMetatableIndex: top + 2)
        return encoder.encode(L, top: top, into: &writer, otherwise: "cannot encode the value") { $0.value(value) }
    }
}

// MARK: - Output

/// The JSON encoder writes into the shared codec buffer.
typealias JSONWriter = ByteWriter

/// Where Double.write(to:) puts its digits. The standard library hands a finite double's text
/// to `_writeASCII` as bytes, with no String made; `write(_:)` is the general fallback.
extension JSONWriter: TextOutputStream {
    mutating func write(_ string: String) {
        var text = string
        text.withUTF8 { append($0.baseAddress!, $0.count) }
    }

    mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) {
        append(buffer.baseAddress!, buffer.count)
    }
}
