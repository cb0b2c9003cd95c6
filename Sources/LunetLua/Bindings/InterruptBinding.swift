import CLunetLua
import LunetLuaStack
import Glibc

/// core.on_interrupt(fn): Ctrl-C (SIGINT) and SIGTERM call fn on the loop instead of ending
/// the process, for a program that stops in its own way (`lunet load` prints its summary
/// first); core.on_interrupt(nil) gives both back their defaults. The handler only writes a
/// byte to a pipe the loop watches (the self-pipe trick): all a signal handler may do.
enum InterruptBinding {
    nonisolated(unsafe) static var pipe: [Int32] = [-1, -1]
    nonisolated(unsafe) static var callback: Int32 = LUA_NOREF

    static let onInterrupt: lunet_SwiftFunction = { L in
        let L = L!
        let s = LuaStack(L)
        let host = LuaHost.from(L)
        if s.type(1) == LUA_TNIL || s.type(1) == LUA_TNONE {
            restoreDefaults()
            if callback != LUA_NOREF { host.release(callback); callback = LUA_NOREF }
            if pipe[0] >= 0 { host.loop.unwatch(pipe[0]) }
            return 0
        }
        guard s.type(1) == LUA_TFUNCTION else { return LuaErrorObject.badArgument(L, 1, "on_interrupt", "function or nil expected") }
        if pipe[0] < 0 {
            var fds: [Int32] = [0, 0]
            guard Glibc.pipe(&fds) == 0 else { return LuaErrorObject.raise(L, .io, "on_interrupt: no pipe: \(String(cString: strerror(errno)))") }
            for fd in fds {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            }
            pipe = fds
        }
        if callback != LUA_NOREF { host.release(callback) }
        s.pushValue(1)
        callback = host.reference(from: L)
        host.loop.watch(pipe[0]) { [unowned host] in
            var buffer = [UInt8](repeating: 0, count: 16)
            var got = false
            while read(pipe[0], &buffer, buffer.count) > 0 { got = true }
            if got && callback != LUA_NOREF { host.call(callback) }
        }
        for sig in [SIGINT, SIGTERM] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { _ in
                var byte: UInt8 = 1
                _ = write(InterruptBinding.pipe[1], &byte, 1)
                // The loop may never read that byte (a VU spinning in `lunet load`): the VUs'
                // hook hears it here (vu_stop.c; nothing without VU hooks armed).
                lunet_vu_signal()
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(sig, &action, nil)
        }
        return 0
    }

    private static func restoreDefaults() {
        for sig in [SIGINT, SIGTERM] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = SIG_DFL
            sigemptyset(&action.sa_mask)
            sigaction(sig, &action, nil)
        }
    }
}

extension InterruptBinding {
    /// lunet.core's functions for Ctrl-C and SIGTERM as a callback (CoreModule.open gathers each concern's).
    static let functions: [CoreFunction] = [
        CoreFunction("on_interrupt", onInterrupt),
    ]
}
