import CLunet
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
            if let status = checkOptions(L, 2, "decode", known: ["keep_whitespace", "max_depth", "ignore_encoding"]) { return status }
            for name in ["keep_whitespace", "ignore_encoding"] {
                switch boolOption(L, 2, name) {
                case .some(.some(let on)):
                    if name == "keep_whitespace" { options.keepWhitespace = on } else { options.ignoreEncoding = on }
                case .some(.none):
                    break
                case .none:
                    return badOption(L, "decode", name, "a boolean")
                }
            }
            let type = lunet_rawgetfield(L, 2, "max_depth")
            var isInteger: Int32 = 0
            let n = lua_tointegerx(L, -1, &isInteger)
            if type != LUA_TNIL && (type != LUA_TNUMBER || isInteger == 0 || n < 1) {
                let shown = type == LUA_TNUMBER ? (LuaStack(L).string(-1) ?? "?") : "a " + typeName(L, -1)
                lunet_pop(L, 1)
                return LuaErrorObject.badArgument(L, 2, "decode", "option 'max_depth' must be a positive integer, got \(shown)")
            }
            lunet_pop(L, 1)
            if type != LUA_TNIL { options.maxDepth = Int(min(n, lua_Integer(Int32.max))) }
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
            if let status = checkOptions(L, 2, "encode", known: ["pretty", "declaration"]) { return status }
            for name in ["pretty", "declaration"] {
                switch boolOption(L, 2, name) {
                case .some(.some(let on)):
                    if name == "pretty" { options.pretty = on } else { options.declaration = on }
                case .some(.none):
                    break
                case .none:
                    return badOption(L, "encode", name, "a boolean")
                }
            }
        }
        var writer = XMLWriter()
        defer { writer.release() }
        if let error = LuaXMLEncoder.encode(L, index: 1, options: options, writer: &writer) {
            LuaErrorObject.push(L, error)
            return LUNET_RAISE
        }
        lunet_pushbytes(L, writer.base, writer.count)
        return 1
    }

    /// A boolean option: .some(.some(value)), .some(nil) when absent, nil when not a boolean.
    static func boolOption(_ L: OpaquePointer, _ index: Int32, _ name: String) -> Bool?? {
        let type = lunet_rawgetfield(L, index, name)
        let on = lua_toboolean(L, -1) != 0
        lunet_pop(L, 1)
        switch type {
        case LUA_TNIL: return .some(nil)
        case LUA_TBOOLEAN: return .some(on)
        default: return nil
        }
    }

    static func badOption(_ L: OpaquePointer, _ function: String, _ name: String, _ expected: String) -> Int32 {
        let type = lunet_rawgetfield(L, 2, name)
        let got = String(cString: lua_typename(L, type))
        lunet_pop(L, 1)
        return LuaErrorObject.badArgument(L, 2, function, "option '\(name)' must be \(expected), got \(got)")
    }

    /// Checks the option table at `index`: nil, or a table whose keys are all in `known`.
    /// Returns nil when it is fine, else the status of the argument error it pushed.
    static func checkOptions(_ L: OpaquePointer, _ index: Int32, _ function: String, known: [String]) -> Int32? {
        switch lua_type(L, index) {
        case LUA_TNONE, LUA_TNIL:
            return nil
        case LUA_TTABLE:
            break
        default:
            return LuaErrorObject.badArgument(L, Int(index), function, "options table expected, got \(typeName(L, index))")
        }
        let s = LuaStack(L)
        lua_pushnil(L)
        while lua_next(L, index) != 0 {
            lunet_pop(L, 1)
            if lua_type(L, -1) == LUA_TSTRING, let name = s.string(-1), known.contains(name) { continue }
            let shown = lua_type(L, -1) == LUA_TSTRING ? "'\(s.string(-1) ?? "")'" : "of type \(typeName(L, -1))"
            lunet_pop(L, 1)
            let list = known.map { "'\($0)'" }.joined(separator: ", ")
            return LuaErrorObject.badArgument(L, Int(index), function, "unknown option \(shown) (known: \(list))")
        }
        return nil
    }

    static func typeName(_ L: OpaquePointer, _ i: Int32) -> String {
        String(cString: lua_typename(L, lua_type(L, i)))
    }
}
