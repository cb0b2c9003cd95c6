import CLunetLua
import LunetLuaStack

/// What `lunet load` needs of the host: stopping VUs that never yield (vu_stop.c). Its
/// histograms' counts are C of their own (CLunetHistogram, core.hdr_open) and a response's
/// phases are ResponseBinding's (core.response_load).
enum LoadBinding {
    /// core.vu_hook(): `lunet load`'s hook on the calling coroutine (a VU's), which raises
    /// `cancelled` there once core.vu_stop_after's time has come, or a second Ctrl-C (vu_stop.c).
    /// core.vu_stop_after(seconds): request that stop after `seconds` (0: now); nil: lift it all.
    /// core.vu_grace(seconds): what a first Ctrl-C or SIGTERM leaves the VUs before their stop.
    static let vuHook: lunet_SwiftFunction = { L in
        lunet_vu_hook_arm(L!)   // L: the coroutine that called
        return 0
    }
    static let vuStopAfter: lunet_SwiftFunction = { L in
        if let seconds = LuaStack(L!).number(1) { lunet_vu_stop_after(seconds) } else { lunet_vu_stop_reset() }
        return 0
    }
    static let vuGrace: lunet_SwiftFunction = { L in
        lunet_vu_grace(LuaStack(L!).number(1) ?? 30)
        return 0
    }

    /// lunet.core's functions for `lunet load`'s VUs (CoreModule.open gathers each concern's).
    static let functions: [CoreFunction] = [
        CoreFunction("vu_hook", vuHook), CoreFunction("vu_stop_after", vuStopAfter), CoreFunction("vu_grace", vuGrace),
    ]
}
