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

extension NetBinding {
    /// lunet.core's functions for the network's reachability (CoreModule.open gathers each concern's).
    static let functions: [CoreFunction] = [
        CoreFunction("net_online", online),
        CoreFunction("net_watch", watch, .function("on_change")),
    ]
}
