// TEMPORARY until the JSON codec lands (same API).
import CLunet
import LunetCore
public enum LuaJSONDecoder {
    public static func decode(_ L: OpaquePointer, _ bytes: UnsafeRawBufferPointer, maxDepth: Int = 1000) -> Int32 {
        LuaErrorObject.push(L, .decode, "JSON not built yet"); return LUNET_RAISE
    }
}
public enum JSONModule {
    public static func pushModule(_ L: OpaquePointer) { lua_createtable(L, 0, 0) }
}
