import CLunetLua
import LunetCore
import LunetLuaStack

/// core.gzip(bytes) and core.gunzip(bytes [, max]): LunetCore's Gzip for gRPC's "gzip" message
/// encoding (lua/lunet/grpc). gunzip refuses, as kind too_large, anything that would come out
/// longer than `max` bytes (64 MiB when not given), before holding it.
enum GzipBinding {
    static let gzip: lunet_SwiftFunction = { L in
        let s = LuaStack(L!)
        guard let input = s.bytes(1) else { return LuaErrorObject.badArgument(L!, 1, "gzip", "string expected") }
        switch Gzip.compress(input, { s.push(bytes: $0) }) {
        case .success: return 1
        case .failure(let e): return LuaErrorObject.raise(L!, e.kind, e.message)
        }
    }

    static let gunzip: lunet_SwiftFunction = { L in
        let s = LuaStack(L!)
        guard let input = s.bytes(1) else { return LuaErrorObject.badArgument(L!, 1, "gunzip", "string expected") }
        let max = lua_type(L, 2) == LUA_TNUMBER ? Int(lua_tointegerx(L, 2, nil)) : 64 << 20
        switch Gzip.decompress(input, max: max, { s.push(bytes: $0) }) {
        case .success: return 1
        case .failure(let e): return LuaErrorObject.raise(L!, e.kind, e.message)
        }
    }
}
