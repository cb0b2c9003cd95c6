import CLunetLua
import LunetLuaStack
import LunetCore

/// The `xml` module: `decode`, `encode` (API.md, "Serializers"; the rules are in docs/xml.md).
/// Every function is a Swift function behind the trampoline.
public enum XMLModule {
    /// Pushes the module table.
    public static func pushModule(_ L: OpaquePointer) {
        lua_createtable(L, 0, 2)
        let s = LuaStack(L)
        s.pushFunction(decodeFunction)
        s.setRawField(-2, "decode")
        s.pushFunction(encodeFunction)
        s.setRawField(-2, "encode")
    }

    /// Decodes an XML document from bytes (a response body, without copying it) with the
    /// default options: pushes the root element table and returns 1, or pushes a `decode`
    /// error object and returns LUNET_RAISE. The stack is exactly one higher either way.
    public static func decode(_ L: OpaquePointer, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        LuaXMLDecoder.decode(L, bytes)
    }

    /// The same with options (keep_whitespace, max_depth, ignore_encoding as Swift values).
    public static func decode(_ L: OpaquePointer, _ bytes: UnsafeRawBufferPointer, options: LuaXMLDecoder.Options) -> Int32 {
        LuaXMLDecoder.decode(L, bytes, options: options)
    }

    /// xml.decode(s [, { keep_whitespace = bool, max_depth = n, ignore_encoding = bool }]) -> element
    static let decodeFunction: lunet_SwiftFunction = { L in
        let L = L!
        guard lua_type(L, 1) == LUA_TSTRING else {
            return LuaErrorObject.badArgument(L, 1, "decode", "string expected, got \(typeName(L, 1))")
        }
        var options = LuaXMLDecoder.Options()
        if lua_type(L, 2) > LUA_TNIL {
            if let status = CodecOptions.check(L, 2, "decode", known: ["keep_whitespace", "max_depth", "ignore_encoding"]) { return status }
            for name in ["keep_whitespace", "ignore_encoding"] {
                switch CodecOptions.bool(L, 2, "decode", name) {
                case .absent: break
                case .value(let on): if name == "keep_whitespace" { options.keepWhitespace = on } else { options.ignoreEncoding = on }
                case .failed(let status): return status
                }
            }
            switch CodecOptions.maxDepth(L, 2, "decode") {
            case .absent: break
            case .value(let n): options.maxDepth = n
            case .failed(let status): return status
            }
        }
        var length = 0
        let text = lunet_tolstring(L, 1, &length)!
        return LuaXMLDecoder.decode(L, UnsafeRawBufferPointer(start: text, count: length), options: options)
    }

    /// xml.encode(element [, { pretty = bool, declaration = bool }]) -> string
    static let encodeFunction: lunet_SwiftFunction = { L in
        let L = L!
        guard lua_gettop(L) >= 1 else { return LuaErrorObject.badArgument(L, 1, "encode", "element expected") }
        guard lua_type(L, 1) == LUA_TTABLE else {
            return LuaErrorObject.badArgument(L, 1, "encode", "element table expected, got \(typeName(L, 1))")
        }
        var options = LuaXMLEncoder.Options()
        if lua_type(L, 2) > LUA_TNIL {
            if let status = CodecOptions.check(L, 2, "encode", known: ["pretty", "declaration"]) { return status }
            for name in ["pretty", "declaration"] {
                switch CodecOptions.bool(L, 2, "encode", name) {
                case .absent: break
                case .value(let on): if name == "pretty" { options.pretty = on } else { options.declaration = on }
                case .failed(let status): return status
                }
            }
        }
        var writer = XMLWriter()
        writer.owner = "xml.encode"
        defer { writer.release() }
        if let error = LuaXMLEncoder.encode(L, index: 1, options: options, writer: &writer) {
            LuaErrorObject.push(L, error)
            return LUNET_RAISE
        }
        return writer.pushResult(L)
    }

    static func typeName(_ L: OpaquePointer, _ i: Int32) -> String { CodecOptions.typeName(L, i) }
}
