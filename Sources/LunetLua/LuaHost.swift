import CLunetLua
import LunetCodecs
import LunetLuaStack
import Glibc
import LunetCore

/// A Lua state wired to an event loop: the standard libraries, the Lua that ships in lua/, and
/// the bindings that expose the core. It belongs to the thread that made it, like its loop.
public final class LuaHost {
    /// The main thread of the state.
    public let L: OpaquePointer
    public let loop: EventLoop
    /// The thread Swift calls Lua on right now: the main thread, or the coroutine that entered
    /// Swift (core.step from a nested wait), whose stack is the one that is running.
    var current: OpaquePointer
    /// Registry references handed out and not yet released; tests assert it returns to zero.
    public private(set) var liveReferences = 0
    /// Descriptors watched for Lua (route changes), released when the host closes.
    var watchers: [(socket: RouteChangeSocket, callback: Int32)] = []
    /// Transfers Lua started and may still cancel, under the number core.send gave Lua for each
    /// (a number rather than a userdata: no box and no finalizer per request; a slot table
    /// rather than a dictionary: no hashing).
    var transfers = SlotTable<Transfer>()
    /// Open WebSockets, by the number core.websocket_open gave Lua, with their event callback.
    var websocketsByID: [Int: (connection: WebSocketConnection, callback: Int32)] = [:]
    var lastTransferID = 0   // WebSocket numbers
    /// The URL text the last plain core.send read from Lua (see `urlText`).
    private var lastURLText = ""

    /// The string at `index` of `L`'s stack as a String, for a request's URL:
    /// the last one's String itself when the bytes are the same (a loop of requests to one URL
    /// makes no new string for each, and the session and the loop, which compare with the URL
    /// they saw last, find the very same string). nil when it is not a string or a number.
    func urlText(_ L: OpaquePointer, at index: Int32) -> String? {
        let t = lua_type(L, index)
        guard t == LUA_TSTRING || t == LUA_TNUMBER else { return nil }
        var len = 0
        guard let p = lunet_tolstring(L, index, &len) else { return nil }
        let same = lastURLText.utf8.withContiguousStorageIfAvailable { last in
            last.count == len && (len == 0 || memcmp(last.baseAddress!, p, len) == 0)
        }
        if same == true { return lastURLText }
        lastURLText = String(decoding: UnsafeRawBufferPointer(start: p, count: len), as: UTF8.self)
        return lastURLText
    }
    /// The function a plain request's completion goes to when core.send was given the request's
    /// task instead of a callback: plain_completion(task, response, ...) or (task, nil, error).
    /// One function for every such request, set once by http.lua (core.set_plain_completion):
    /// no closure per request.
    var plainCompletionRef: Int32 = LUA_NOREF
    /// The number core.websocket_open hands Lua for its next connection.
    func newTransferID() -> Int {
        lastTransferID += 1
        return lastTransferID
    }
    /// After the first request has been handed to the core: the modules a program starts with
    /// are loaded by then, and libcurl too (the main thread waited for the preload thread), so
    /// no other CPU of the process has to drop the mappings with it.
    func requestStarted() {
        guard !releasesEmbeddedText else { return }
        releasesEmbeddedText = true
        releaseEmbeddedText()
    }
    private func releaseEmbeddedText() { for text in EmbeddedLua.texts { EmbeddedText.release(text) } }
    /// Set at the first request: from then on the embedded Lua's pages go back after each module
    /// load (EmbeddedText.release).
    private var releasesEmbeddedText = false
    private var drainRef: Int32 = LUA_NOREF
    private var deliverRef: Int32 = LUA_NOREF
    private var recoverRef: Int32 = LUA_NOREF
    private var hostRef: Int32 = LUA_NOREF
    public private(set) var isClosed = false
    /// Where errors nobody can catch go (a continuation's error is caught by its task; this is
    /// for the host's own callbacks). Standard error by default.
    public var reportError: (String) -> Void = { message in
        LuaHost.writeStandardError("lunet: \(message)\n")
    }

    /// False for a host attached to someone else's state (the Lua module): it never closes it.
    public let ownsState: Bool

    /// `ignoreEnvironment`: the package library ignores LUA_PATH and LUA_CPATH (lua5.4's -E).
    public init(loop: EventLoop = EventLoop(), ignoreEnvironment: Bool = false) throws(LunetError) {
        guard let L = lunet_newstate() else { throw LunetError(.argument, "could not create a Lua state") }
        self.L = L
        self.current = L
        self.loop = loop
        self.ownsState = true
        lunet_extraspace(L).pointee = Unmanaged.passUnretained(self).toOpaque()
        if ignoreEnvironment { lunet_set_noenv(L) }
        guard lunet_openlibs(L) == LUA_OK else { throw LunetError(.argument, "could not open Lua's standard libraries") }
        installPreloads()
        try requirePrelude(globals: true)
        loop.runDueWorkHandler = { [unowned self] in self.drain() }
    }

    /// A host on a state that a stock interpreter made (`require "lunet"`): lunet's modules are
    /// installed in its package.preload, no globals are set, and the state stays the caller's.
    /// The state's extra space holds the host pointer, so another C module must not use it.
    public init(attachingTo L: OpaquePointer) throws(LunetError) {
        self.L = L
        self.current = L
        self.loop = EventLoop()
        self.ownsState = false
        lunet_extraspace(L).pointee = Unmanaged.passUnretained(self).toOpaque()
        installPreloads()
        try requirePrelude(globals: false)
        loop.runDueWorkHandler = { [unowned self] in self.drain() }
    }

    deinit { close() }

    /// The host that owns `L` (any thread of its state).
    public static func from(_ L: OpaquePointer) -> LuaHost {
        Unmanaged<LuaHost>.fromOpaque(lunet_extraspace(L).pointee!).takeUnretainedValue()
    }

    /// Closes the state: transfers still running are cancelled, cookies saved, every Swift
    /// object Lua held is released.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        loop.cancelAll()
        for w in watchers {
            loop.unwatch(w.socket.fd)
            release(w.callback)
        }
        watchers = []
        transfers = SlotTable()
        for (_, ws) in websocketsByID {
            ws.connection.terminate(code: 1001, reason: "the host closed")
            release(ws.callback)
        }
        websocketsByID = [:]
        release(drainRef)
        release(deliverRef)
        release(recoverRef)
        recoverRef = LUA_NOREF
        release(plainCompletionRef)
        plainCompletionRef = LUA_NOREF
        release(hostRef)
        drainRef = LUA_NOREF
        deliverRef = LUA_NOREF
        hostRef = LUA_NOREF
        loop.runDueWorkHandler = nil
        if ownsState { lunet_closestate(L) }
    }

    // MARK: the Lua that ships with the host

    private func installPreloads() {
        let s = LuaStack(L)
        lua_rawgeti(L, lunet_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
        s.rawField(-1, "package")
        s.rawField(-1, "preload")
        // lunet.core, made once: the upvalue of every module's loader (lunet_wrap_module_chunk),
        // in no table a script can reach.
        _ = CoreModule.open(L)
        let core = s.top
        if lua_getmetatable(L, -2) == 0 {
            // Modules load when first required (most programs need half of them): an __index on
            // package.preload, which `require` consults, gives a module's loader on demand.
            s.newTable()
            lua_pushvalue(L, core)
            s.pushFunction(Self.embeddedChunk, upvalues: 1)
            s.setRawField(-2, "__index")
            lua_setmetatable(L, -3)
        } else {
            s.pop()   // someone else's metatable on preload: leave it, and load everything now
            for index in EmbeddedLua.files.indices where loadEmbedded(index, on: L, core: core) {
                s.setRawField(-3, EmbeddedLua.files[index].module.description)
            }
        }
        s.pop()   // core
        s.pushFunction(openJSON)
        s.setRawField(-2, "lunet.json")
        s.pushFunction(Self.openXML)
        s.setRawField(-2, "lunet.xml")
        s.pushFunction(Self.openProtobuf)
        s.setRawField(-2, "lunet.protobuf")
        s.pop(3)
    }

    /// Pushes the chunk of an embedded file: its bytecode, or its source when this Lua runtime
    /// reads another bytecode format. False (nothing pushed) after reporting a defect.
    /// package.preload's __index(preload, name): the chunk of lunet's embedded module `name`,
    /// loaded now (require then runs it and keeps its value in package.loaded), or nothing.
    private static let embeddedChunk: lunet_SwiftFunction = { L in
        let L = L!
        guard lua_type(L, 2) == LUA_TSTRING else { return 0 }
        var length = 0
        let name = lua_tolstring(L, 2, &length)!
        // The names compared as bytes: a String of each module's name was made for every
        // comparison, a few thousand instructions for each module a program loads.
        guard let index = EmbeddedLua.files.firstIndex(where: {
            $0.module.utf8CodeUnitCount == length && memcmp($0.module.utf8Start, name, length) == 0
        }) else { return 0 }
        return LuaHost.from(L).loadEmbedded(index, on: L, core: lunet_upvalue(1)) ? 1 : 0
    }


    /// Pushes the loader of an embedded module: its chunk, run as chunk(name, core) (lunet's
    /// modules take core from their loader, `local core = select(2, ...)`, never by name).
    /// `core`: the stack index of the lunet.core table.
    private func loadEmbedded(_ index: Int, on L: OpaquePointer, core: Int32) -> Bool {
        let s = LuaStack(L)
        let path = EmbeddedLua.files[index].path
        let name = "@" + path.description
        if load(EmbeddedLua.bytecode(index), name: name, mode: "b", on: L) {
            if releasesEmbeddedText { releaseEmbeddedText() }
            lua_pushvalue(L, core)
            lunet_wrap_module_chunk(L)
            return true
        }
        s.pop()   // another Lua's bytecode format: its source instead
        if load(EmbeddedLua.source(index), name: name, mode: "t", on: L) {
            lua_pushvalue(L, core)
            lunet_wrap_module_chunk(L)
            return true
        }
        reportError("could not load \(path): \(s.string(-1) ?? "?")")
        s.pop()
        return false
    }

    private func load(_ bytes: [UInt8], name: String, mode: String, on L: OpaquePointer) -> Bool {
        bytes.withUnsafeBufferPointer { b in
            b.withMemoryRebound(to: CChar.self) { lunet_loadbuffer(L, $0.baseAddress, $0.count, name, mode) }
        } == LUA_OK
    }

    private func requirePrelude(globals: Bool) throws(LunetError) {
        let s = LuaStack(L)
        // The prelude reads this to decide whether to set http, task, json... as globals.
        s.push(globals)
        s.setRawField(lunet_registryindex(), "lunet.globals")
        lua_rawgeti(L, lunet_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
        s.rawField(-1, "require")
        s.push("lunet.prelude")
        guard lunet_pcall(L, 1, 1) == LUA_OK else {
            let message = s.string(-1) ?? "?"
            s.pop(2)
            throw LunetError(.argument, "the prelude failed: \(message)")
        }
        // The prelude returns what the host drives (drain, start, finish); keep it.
        s.rawField(-1, "drain")
        drainRef = reference()
        s.rawField(-1, "deliver")
        deliverRef = reference()
        s.rawField(-1, "recover")
        recoverRef = reference()
        hostRef = reference()
        s.pop()
    }

    private static let openJSONFunction: lunet_SwiftFunction = { L in
        JSONModule.pushModule(L!)
        return 1
    }
    private var openJSON: lunet_SwiftFunction { Self.openJSONFunction }
    private static let openXML: lunet_SwiftFunction = { L in
        XMLModule.pushModule(L!)
        return 1
    }
    private static let openProtobuf: lunet_SwiftFunction = { L in
        ProtobufModule.pushModule(L!)
        return 1
    }

    /// Pushes a field of the table the prelude returned.
    func pushHostField(_ name: String) {
        lunet_getref(L, hostRef)
        LuaStack(L).rawField(-1, name)
        lunet_remove(L, -2)
    }

    // MARK: references

    /// Pops the value on top of `thread`'s stack (the main thread's by default) into the registry.
    public func reference(from thread: OpaquePointer? = nil) -> Int32 {
        liveReferences += 1
        return lunet_ref(thread ?? L)
    }

    public func release(_ ref: Int32) {
        guard ref != LUA_NOREF && ref != LUA_REFNIL else { return }
        liveReferences -= 1
        if !isClosed { lunet_unref(L, ref) }
    }

    // MARK: calling Lua from Swift

    /// Calls the function in `ref` with what `arguments` pushes, protected, on the thread that
    /// is running now. An error is reported, never raised into Swift.
    public func call(_ ref: Int32, _ arguments: (LuaStack) -> Int32 = { _ in 0 }) {
        guard !isClosed else { return }
        let L = current
        let s = LuaStack(L)
        guard s.ensure(16) else { reportError("the Lua stack is full"); return }
        lunet_getref(L, ref)
        let n = arguments(s)
        if lunet_pcall(L, n, 0) != LUA_OK {
            reportError(describeError(at: -1))
            s.pop()
        }
    }

    /// Calls the function in `ref` like `call`, for news from the loop (a completion, a timer):
    /// through the runtime's deliver, which also runs the work the function made due (resumes,
    /// continuations) in the same call from Swift, not on a second one.
    public func deliver(_ ref: Int32, _ arguments: (LuaStack) -> Int32 = { _ in 0 }) {
        guard !isClosed else { return }
        guard deliverRef != LUA_NOREF else { return call(ref, arguments) }
        let L = current
        let s = LuaStack(L)
        guard s.ensure(18) else { reportError("the Lua stack is full"); return }
        lunet_getref(L, deliverRef)
        lunet_getref(L, ref)
        runDelivery(L, arguments(s) + 1)
    }

    /// Calls `ref`, a function that is a delivery itself (runtime.delivering: it runs the work
    /// it queues before it returns), like `deliver` without the runtime's deliver between.
    func deliverDirectly(_ ref: Int32, _ arguments: (LuaStack) -> Int32) {
        guard !isClosed else { return }
        let L = current
        let s = LuaStack(L)
        guard s.ensure(16) else { reportError("the Lua stack is full"); return }
        lunet_getref(L, ref)
        runDelivery(L, arguments(s))
    }

    /// Calls the function under its `n` arguments on `L`'s stack, protected. deliver protects
    /// nothing itself (runtime.lua says why): a defect is reported here, and runtime.recover sets
    /// its state right.
    private func runDelivery(_ L: OpaquePointer, _ n: Int32) {
        guard lunet_pcall(L, n, 0) != LUA_OK else { return }
        reportError(describeError(at: -1))
        LuaStack(L).pop()
        call(recoverRef)
    }

    /// Runs the continuations and coroutine resumes that are due.
    func drain() {
        guard drainRef != LUA_NOREF else { return }
        call(drainRef)
    }

    /// Runs `body` with `thread` as the running thread, for Swift entered from a coroutine.
    func entered<R>(from thread: OpaquePointer, _ body: () -> R) -> R {
        let saved = current
        current = thread
        defer { current = saved }
        return body()
    }

    /// A readable text for the error value at `index` (a string, or an error object's
    /// __tostring, found without calling it unprotected).
    public func describeError(at index: Int32) -> String {
        let s = LuaStack(current)
        if let text = s.string(index) { return text }
        let idx = s.absolute(index)
        // Call tostring under protection.
        lua_rawgeti(current, lunet_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
        s.rawField(-1, "tostring")
        lunet_remove(current, -2)
        s.pushValue(idx)
        if lunet_pcall(current, 1, 1) == LUA_OK, let text = s.string(-1) {
            s.pop()
            return text
        }
        s.pop()
        return "(an error value of type \(s.typeName(idx)))"
    }

    static func writeStandardError(_ text: String) {
        var t = text
        t.withUTF8 { buf in _ = Glibc.write(2, buf.baseAddress, buf.count) }
    }
}
