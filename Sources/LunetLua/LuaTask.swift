import CLunetLua
import LunetLuaStack
import LunetCore

/// A Lua task seen from Swift: its state, and a callback when it settles. Lives on the host's
/// thread like everything else of the host.
public final class LuaTask {
    public typealias Outcome = Result<LuaValue, LuaFailure>

    unowned let host: LuaHost
    let ref: Int32

    init(host: LuaHost, ref: Int32) {
        self.host = host
        self.ref = ref
    }

    deinit { host.release(ref) }

    /// "pending", "done", "failed" or "cancelled".
    public var state: String { host.taskState(ref) ?? "pending" }

    /// The outcome, once settled (nil while pending).
    public var outcome: Outcome? {
        guard !host.isClosed else { return .failure(.cancelled("the host closed")) }
        lunet_getref(host.L, ref)
        defer { LuaStack(host.L).pop() }
        return LuaTask.outcome(host.L, at: -1)
    }

    /// Runs `body` on the loop once the task has settled (on a later turn if it already has).
    public func onSettled(_ body: @escaping (Outcome) -> Void) {
        let L = host.L
        let s = LuaStack(L)
        host.pushHostField("observe")
        lunet_getref(L, ref)
        host.pushFunction({ stack in
            body(LuaTask.outcome(stack.L, at: 1) ?? .failure(.script("the task had not settled")))
            return 0
        })
        if lunet_pcall(L, 2, 0) != LUA_OK {
            host.reportError(host.describeError(at: -1))
            s.pop()
        }
    }

    /// Cancels the task and what it is waiting for (a request stops at once).
    public func cancel(_ message: String = "the task was cancelled") {
        let s = LuaStack(host.L)
        host.pushHostField("cancel")
        lunet_getref(host.L, ref)
        s.push(message)
        if lunet_pcall(host.L, 2, 0) != LUA_OK {
            host.reportError(host.describeError(at: -1))
            s.pop()
        }
    }

    /// Runs the loop until the task settles (for callers on the loop's thread that may block).
    public func wait() -> Outcome {
        host.loop.run(until: { self.state != "pending" })
        return outcome ?? .failure(.script("the task can never settle: nothing is pending on the loop"))
    }

    static func outcome(_ L: OpaquePointer, at index: Int32) -> Outcome? {
        let s = LuaStack(L)
        let t = s.absolute(index)
        switch s.stringField(t, "state") {
        case "done":
            s.rawField(t, "result")
            defer { s.pop() }
            return .success(LuaValue(L, at: -1))
        case "failed", "cancelled":
            s.rawField(t, "error")
            defer { s.pop() }
            let failure = LuaFailure(L, at: -1)
            if s.stringField(t, "state") == "cancelled", case .lunet(_, let m, _) = failure { return .failure(.cancelled(m)) }
            return .failure(failure)
        default:
            return nil
        }
    }
}

extension LuaHost {
    /// Runs `code` as a host coroutine (it may await requests) and returns its task at once.
    /// The task's result is the chunk's first return value.
    public func spawn(_ code: String, name: String = "=swift") -> Result<LuaTask, LuaFailure> {
        let s = LuaStack(L)
        var code = code
        let status = code.withUTF8 { buf in
            buf.withMemoryRebound(to: CChar.self) { lunet_loadbuffer(L, $0.baseAddress, $0.count, name, "t") }
        }
        guard status == LUA_OK else {
            defer { s.pop() }
            return .failure(.script(s.string(-1) ?? "could not load the code"))
        }
        pushHostField("start")
        lunet_insert(L, -2)
        guard lunet_pcall(L, 1, 1) == LUA_OK else {
            defer { s.pop() }
            return .failure(LuaFailure(L, at: -1))
        }
        return .success(LuaTask(host: self, ref: reference()))
    }
}
