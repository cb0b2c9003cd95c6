import CLunetLua
import LunetCore

/// Error objects as Lua sees them: tables with `kind`, `message`, `url` (and `response` when
/// there was one) whose metatable, registered by lua/lunet/errors.lua under "lunet.Error", gives
/// them a readable __tostring.
public enum LuaErrorObject {
    public static let metatableKey = "lunet.Error"

    /// Pushes an error object.
    public static func push(_ L: OpaquePointer, _ kind: LunetError.Kind, _ message: String, url: String? = nil) {
        let s = LuaStack(L)
        s.newTable(hash: 4)
        s.set(-1, "kind", kind.rawValue)
        s.set(-1, "message", message)
        if let url { s.set(-1, "url", url) }
        if s.registryField(metatableKey) == LUA_TTABLE {
            lua_setmetatable(L, -2)
        } else {
            s.pop()
        }
    }

    /// A core error: its kind, message and URL, and `connection_lost = true` when the
    /// connection closed, reset or stayed silent before a whole answer (a caller deciding
    /// whether a request may have reached the server reads it: lunet.grpc's one retry).
    public static func push(_ L: OpaquePointer, _ error: LunetError) {
        push(L, error.kind, error.message, url: error.url)
        if error.connectionLost { LuaStack(L).set(-1, "connection_lost", true) }
    }

    /// Pushes an error object and returns the status that makes the trampoline raise it.
    /// Use as `return LuaErrorObject.raise(L, .argument, "...")` from a Swift function.
    public static func raise(_ L: OpaquePointer, _ kind: LunetError.Kind, _ message: String, url: String? = nil) -> Int32 {
        push(L, kind, message, url: url)
        return LUNET_RAISE
    }

    /// The usual "bad argument #n to 'f' (...)" as an `argument` error object.
    public static func badArgument(_ L: OpaquePointer, _ position: Int, _ function: String, _ problem: String) -> Int32 {
        raise(L, .argument, "bad argument #\(position) to '\(function)' (\(problem))")
    }
}
