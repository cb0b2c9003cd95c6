import CLunetLua
import LunetLuaStack
import LunetCore

/// core.net_online() and core.net_watch(fn): the kernel's routes for lua/lunet/net.lua.
enum NetBinding {
    static let online: lunet_SwiftFunction = { L in
        LuaStack(L!).push(RouteTable.online())
        return 1
    }

    /// Calls fn() on the loop whenever the kernel reports a route or link change; returns
    /// true, or false when netlink is not available here (the caller then polls).
    static let watch: lunet_SwiftFunction = { L in
        let L = L!
        let s = LuaStack(L)
        guard s.type(1) == LUA_TFUNCTION else { return LuaErrorObject.badArgument(L, 1, "net_watch", "function expected") }
        guard let socket = RouteChangeSocket() else {
            s.push(false)
            return 1
        }
        let host = LuaHost.from(L)
        s.pushValue(1)
        let ref = host.reference(from: L)
        host.watchers.append((socket, ref))
        host.loop.watch(socket.fd) { [unowned host] in
            socket.drain()
            host.call(ref)
        }
        s.push(true)
        return 1
    }
}
