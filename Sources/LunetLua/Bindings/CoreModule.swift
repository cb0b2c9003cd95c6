import CLunetLua
import CLunetHistogram
import CLunetCurl
import LunetLuaStack
import Glibc
import LunetCore

/// `lunet.core`: the private primitives the Lua layer (lua/lunet/*.lua) is written on. Users
/// never see it; they see http, task and the rest.
enum CoreModule {
    static let open: lunet_SwiftFunction = { L in
        let s = LuaStack(L!)
        // Each concern declares its own functions (and their arguments) beside them; the table
        // Lua sees stays one flat table (a name's prefix says its concern): a request's path
        // looks each up once.
        s.newTable(hash: Int32(all.count + 1))
        for (index, f) in all.enumerated() {
            f.push(s, index: index)
            s.setRawField(-2, f.name)
        }
        lunet_push_hdr_open(L)   // C, not Swift: a histogram's record is one call (hdr_histogram.c)
        s.setRawField(-2, "hdr_open")
        return 1
    }

    /// Every function of lunet.core, by concern (`checked` finds a function's declared arguments
    /// by its index here).
    static let all: [CoreFunction] = loopFunctions + processFunctions + LoadBinding.functions + SessionBinding.functions
        + TransferBinding.functions + WebSocketBinding.functions + ResponseBinding.functions + CacheBinding.functions
        + FileBinding.functions + DirectoryBinding.functions + NetBinding.functions + TerminalBinding.functions
        + InterruptBinding.functions + GzipBinding.functions

    /// The loop: turns, clocks, timers, deadlines, connection limits, the crossing counter.
    static let loopFunctions: [CoreFunction] = [
        CoreFunction("wake", wake), CoreFunction("step", step), CoreFunction("step_until", stepUntil), CoreFunction("now", now), CoreFunction("wall_time", wallTime),
        CoreFunction("live_transfers", liveTransfers), CoreFunction("timer", timer), CoreFunction("timer_cancel", timerCancel), CoreFunction("crossings", crossings),
        CoreFunction("deadline", deadline), CoreFunction("limits", limits),
    ]

    /// The process: versions, libcurl, terminals, the libcurl preload, exit, credential names.
    static let processFunctions: [CoreFunction] = [
        CoreFunction("version", version), CoreFunction("libcurl", libcurl), CoreFunction("isatty", isatty), CoreFunction("curl_preload", curlPreload),
        CoreFunction("curl_preload_wait", curlPreloadWait), CoreFunction("before_exit", beforeExit), CoreFunction("is_secret_name", isSecretName),
        CoreFunction("declare_secret_name", declareSecretName),
    ]

    /// core.curl_preload(): start opening libcurl on another thread (lunet_curl_preload: only
    /// in the lunet program); core.curl_preload_wait(): wait for that thread (before exit).
    static let curlPreload: lunet_SwiftFunction = { _ in
        lunet_curl_preload()
        return 0
    }
    static let curlPreloadWait: lunet_SwiftFunction = { _ in
        lunet_curl_preload_wait()
        return 0
    }

    /// core.before_exit(): what the process must wait for before it exits without closing the
    /// state (os.exit): the libcurl preload thread, and every cache's queued disk writes.
    static let beforeExit: lunet_SwiftFunction = { _ in
        lunet_curl_preload_wait()
        HTTPCache.flushAll()
        return 0
    }

    /// core.crossings() -> down, up: the calls from Lua into Swift and from Swift into Lua made
    /// on this thread so far (this call included), for tests that count a request's path.
    static let crossings: lunet_SwiftFunction = { L in
        var down: UInt = 0, up: UInt = 0
        lunet_crossings(&down, &up)
        let s = LuaStack(L!)
        s.push(Int(down))
        s.push(Int(up))
        return 2
    }

    /// The Lua run queue went from empty to not empty: the loop must not block before draining.
    static let wake: lunet_SwiftFunction = { L in
        LuaHost.from(L!).loop.hasDueWork = true
        return 0
    }

    /// One turn of the loop, for a wait that cannot yield (outside a host coroutine).
    static let step: lunet_SwiftFunction = { L in
        let L = L!
        let host = LuaHost.from(L)
        if host.loop.isIdle {
            // Nothing can ever settle what the caller waits for.
            return LuaErrorObject.raise(L, .argument, "waiting for a task that nothing will ever settle (no request, timer or task is pending)")
        }
        host.entered(from: L) { host.loop.runOnce() }
        return 0
    }

    /// core.step_until(task): turns the loop until `task` (a table with a `state` field) is no
    /// longer "pending", in one call down however many turns that takes: what a wait on a thread
    /// that cannot yield does (lunet.runtime.wait: the main thread of a stock lua5.4 that loaded
    /// lunet). The state is read raw between turns; the settling itself happens in the
    /// deliveries the turns make.
    static let stepUntil: lunet_SwiftFunction = { L in
        let L = L!
        guard lua_type(L, 1) == LUA_TTABLE else { return LuaErrorObject.badArgument(L, 1, "step_until", "task expected") }
        let host = LuaHost.from(L)
        func pending() -> Bool {
            lua_pushstring(L, "state")
            lua_rawget(L, 1)
            var length = 0
            let p = lunet_tolstring(L, -1, &length)
            let isPending = p != nil && length == 7 && memcmp(p!, "pending", 7) == 0
            lua_settop(L, 1)
            return isPending
        }
        while pending() {
            if host.loop.isIdle && !host.loop.hasDueWork {
                return LuaErrorObject.raise(L, .argument, "waiting for a task that nothing will ever settle (no request, timer or task is pending)")
            }
            host.entered(from: L) { host.loop.runOnce() }
        }
        return 0
    }

    static let now: lunet_SwiftFunction = { L in
        LuaStack(L!).push(EventLoop.now())
        return 1
    }

    /// core.wall_time(): seconds since the epoch, with fractions (CLOCK_REALTIME). `lunet load`
    /// starts shards together at a wall-clock time and puts their seconds side by side; `now` is
    /// monotonic and means nothing on another machine.
    static let wallTime: lunet_SwiftFunction = { L in
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        LuaStack(L!).push(Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9)
        return 1
    }

    /// Whether a name is a credential's (CredentialFields: one rule for what the cache keeps
    /// apart, what redirects drop and what lua/lunet/secrets.lua masks).
    static let isSecretName: lunet_SwiftFunction = { L in
        let s = LuaStack(L!)
        s.push(s.type(1) == LUA_TSTRING && CredentialFields.isCredential(s.string(1) ?? ""))
        return 1
    }

    /// core.declare_secret_name(name): `name` is a credential's for the rest of the process
    /// (CredentialFields.declare: the cache, redirects, what is printed).
    static let declareSecretName: lunet_SwiftFunction = { L in
        let s = LuaStack(L!)
        if s.type(1) == LUA_TSTRING, let name = s.string(1) { CredentialFields.declare(name) }
        return 0
    }

    static let liveTransfers: lunet_SwiftFunction = { L in
        LuaStack(L!).push(LuaHost.from(L!).loop.liveTransfers)
        return 1
    }

    /// Whether a descriptor is a terminal (progress bars only on one).
    static let isatty: lunet_SwiftFunction = { L in
        let s = LuaStack(L!)
        s.push(Glibc.isatty(Int32(s.integer(1) ?? 1)) != 0)
        return 1
    }

    /// core.version() -> lunet's version, curl's version line (which opens libcurl);
    /// core.version(false): lunet's alone, without touching libcurl.
    static let version: lunet_SwiftFunction = { L in
        let s = LuaStack(L!)
        s.push(Lunet.version)
        if s.type(1) == LUA_TBOOLEAN && !s.bool(1) { return 1 }
        s.push(CurlGlobal.version)
        return 2
    }

    /// core.libcurl() -> a table of what the loaded libcurl is and gives (LibcurlInfo; opens
    /// libcurl): version, version_num, tls, flavour, http2, http3, quic, websocket, path, line,
    /// codings (the content codings lunet removes, a list). Raises kind io when it cannot open.
    static let libcurl: lunet_SwiftFunction = { L in
        let s = LuaStack(L!)
        switch LibcurlInfo.loaded() {
        case .failure(let e): return LuaErrorObject.raise(L!, e.kind, e.message)
        case .success(let i):
            s.newTable()
            s.set(-1, "version", i.version)
            s.set(-1, "version_num", Int(i.number))
            s.set(-1, "tls", i.tls)
            s.set(-1, "flavour", i.flavour)
            s.set(-1, "http2", i.http2)
            s.set(-1, "http3", i.http3)
            s.set(-1, "quic", i.quic)
            s.set(-1, "websocket", i.websocket)
            s.set(-1, "path", i.path)
            s.set(-1, "line", i.line)
            s.newTable()
            for (n, name) in ContentCodings.decodable.enumerated() {
                s.push(name)
                s.setRawIndex(-2, n + 1)
            }
            s.setRawField(-2, "codings")
            return 1
        }
    }

    /// core.timer(seconds, fn[, background]) -> handle: fn runs once on the loop after `seconds`.
    /// A background timer does not keep the loop (a script) running by itself.
    static let timer: lunet_SwiftFunction = { L in
        let L = L!
        let s = LuaStack(L)
        guard let seconds = s.number(1) else { return LuaErrorObject.badArgument(L, 1, "timer", "number expected, got \(s.typeName(1))") }
        guard s.type(2) == LUA_TFUNCTION else { return LuaErrorObject.badArgument(L, 2, "timer", "function expected, got \(s.typeName(2))") }
        let host = LuaHost.from(L)
        s.pushValue(2)
        let ref = host.reference(from: L)
        let handle = TimerHandle()
        let firedOrDropped: (Bool) -> Void = { [unowned host] fired in
            handle.id = nil
            handle.release = nil
            if fired { host.deliver(ref) }
            host.release(ref)
        }
        handle.id = s.bool(3) ? host.loop.addBackgroundTimer(after: seconds, firedOrDropped: firedOrDropped)
                              : host.loop.addTimer(after: seconds, firedOrDropped: firedOrDropped)
        handle.release = { [unowned host] in host.release(ref) }
        LuaUserdata.push(L, handle, metatable: TimerHandle.metatable)
        return 1
    }

    static let timerCancel: lunet_SwiftFunction = { L in
        let L = L!
        guard let handle = LuaUserdata.get(L, 1, TimerHandle.self, metatable: TimerHandle.metatable) else {
            return LuaErrorObject.badArgument(L, 1, "timer_cancel", "timer expected")
        }
        if let id = handle.id {
            LuaHost.from(L).loop.cancelTimer(id)
            handle.id = nil
            handle.release?()
        }
        handle.release = nil
        return 0
    }

    /// core.limits([per_host, total]) -> per_host, total: the loop's connection limits (the ones
    /// in force before, when new ones are given; nil keeps one as it is).
    static let limits: lunet_SwiftFunction = { L in
        let L = L!
        let s = LuaStack(L)
        let loop = LuaHost.from(L).loop
        let before = (loop.maxHostConnections, loop.maxConnections)
        if let n = s.integer(1) { loop.maxHostConnections = n }
        if let n = s.integer(2) { loop.maxConnections = n }
        s.push(before.0)
        s.push(before.1)
        return 2
    }

    /// core.deadline(seconds): the running coroutine (and those it creates) is stopped with a
    /// `timeout` error once `seconds` pass, even if it never yields (lunet test's timeouts);
    /// core.deadline(nil) lifts it.
    static let deadline: lunet_SwiftFunction = { L in
        let L = L!
        if let seconds = LuaStack(L).number(1), seconds > 0 {
            lunet_deadline_arm(L, seconds)   // L: the coroutine that called
        } else {
            lunet_deadline_clear()
        }
        return 0
    }
}

final class TimerHandle {
    static let metatable = LuaUserdata.Kind("lunet.Timer")
    var id: EventLoop.TimerID?
    var release: (() -> Void)?
}
