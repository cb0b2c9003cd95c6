import CLunetLua
import LunetCore
import LunetLuaStack

/// core.gzip(bytes) and core.gunzip(bytes [, max]): LunetCore's Gzip for gRPC's "gzip" message
/// encoding (lua/lunet/grpc); core.snappy(bytes) and core.unsnappy(bytes [, max]): LunetCore's
/// Snappy for Prometheus remote write (lua/lunet/load/prometheus). The ones that decompress
/// refuse, as kind too_large, anything that would come out longer than `max` bytes (64 MiB
/// when not given), before holding it.
enum GzipBinding {
    static let gzip: lunet_SwiftFunction = { L in
        let s = LuaStack(L!)
        let input = s.bytes(1)!   // declared: bytes (functions, below)
        switch Gzip.compress(input, { s.push(bytes: $0) }) {
        case .success: return 1
        case .failure(let e): return LuaErrorObject.raise(L!, e.kind, e.message)
        }
    }

    static let gunzip: lunet_SwiftFunction = { L in
        let s = LuaStack(L!)
        let input = s.bytes(1)!
        let max = lua_type(L, 2) == LUA_TNUMBER ? Int(lua_tointegerx(L, 2, nil)) : 64 << 20
        switch Gzip.decompress(input, max: max, { s.push(bytes: $0) }) {
        case .success: return 1
        case .failure(let e): return LuaErrorObject.raise(L!, e.kind, e.message)
        }
    }
}

extension GzipBinding {
    static let snappy: lunet_SwiftFunction = { L in
        let s = LuaStack(L!)
        switch Snappy.compress(s.bytes(1)!, { s.push(bytes: $0) }) {
        case .success: return 1
        case .failure(let e): return LuaErrorObject.raise(L!, e.kind, e.message)
        }
    }

    static let unsnappy: lunet_SwiftFunction = { L in
        let s = LuaStack(L!)
        let max = lua_type(L, 2) == LUA_TNUMBER ? Int(lua_tointegerx(L, 2, nil)) : 64 << 20
        switch Snappy.decompress(s.bytes(1)!, max: max, { s.push(bytes: $0) }) {
        case .success: return 1
        case .failure(let e): return LuaErrorObject.raise(L!, e.kind, e.message)
        }
    }

    /// lunet.core's functions for gzip and snappy (CoreModule.open gathers each concern's).
    static let functions: [CoreFunction] = [
        CoreFunction("gzip", gzip, .bytes("data")),
        CoreFunction("gunzip", gunzip, .bytes("data"), .integer("max").optional),
        CoreFunction("snappy", snappy, .bytes("data")),
        CoreFunction("unsnappy", unsnappy, .bytes("data"), .integer("max").optional),
    ]
}
