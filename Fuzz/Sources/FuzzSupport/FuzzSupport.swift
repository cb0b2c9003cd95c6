// Shared by the fuzzers: Lua states, stack checks, and checks that stop the run with a message.
@_exported import CFuzzDriver
import CLunetLua
import Glibc
import Lunet

/// Stops the run when a property fails: libFuzzer sees the abort and saves the input.
@inline(never)
public func fuzzFail(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    let text = "FUZZ CHECK FAILED (\(file):\(line)): \(message)\n"
    _ = text.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
    abort()
}

@inline(__always)
public func fuzzCheck(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                      file: StaticString = #fileID, line: UInt = #line) {
    if !condition() { fuzzFail(message(), file: file, line: line) }
}

/// The input's bytes as a buffer (libFuzzer passes a null pointer for the empty input).
public func fuzzBytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(start: size > 0 ? data : nil, count: size)
}

/// Bytes as a Swift String the way lunet makes one from network bytes (invalid UTF-8 repaired).
public func fuzzString(_ bytes: UnsafeRawBufferPointer) -> String {
    String(decoding: bytes, as: UTF8.self)
}

/// Runs `body` on a fresh bare Lua state (`lunet_newstate`, no host, no prelude; the standard
/// libraries only with `libraries: true`) and closes it when `body` returns. A state per input
/// keeps each input's mallocs and frees balanced, so libFuzzer's leak check (run whenever an
/// input allocated more than it freed) finds real leaks rather than a growing state.
///
/// The only way the fuzzers make a state, so that none closes one with plain `lua_close`: the
/// chunks of lunet_newstate's allocator (lua_heap.c) are freed by `lunet_closestate` alone, and
/// the fuzz build's C code is not compiled with AddressSanitizer, so it uses that allocator.
/// With `lua_close`, every input leaked the allocator and its 64 KB chunks, and LeakSanitizer
/// stopped each codec fuzzer after 3 executions (issue 33, item 17).
public func withFuzzState<Result>(libraries: Bool = false, _ body: (OpaquePointer) throws -> Result) rethrows -> Result {
    guard let L = lunet_newstate() else { fuzzFail("lunet_newstate failed") }
    defer { lunet_closestate(L) }
    if libraries { fuzzCheck(lunet_openlibs(L) == LUA_OK, "lunet_openlibs failed") }
    return try body(L)
}

/// Loads and runs `code` on `L` (no arguments, no results); stops the run if it fails.
public func fuzzRunLua(_ L: OpaquePointer, _ code: String, name: String = "=fuzz") {
    var code = code
    code.withUTF8 { b in
        b.withMemoryRebound(to: CChar.self) { c in
            fuzzCheck(lunet_loadbuffer(L, c.baseAddress, c.count, name, "t") == LUA_OK,
                      "cannot load the fuzzer's Lua: \(luaMessage(L, -1))")
        }
    }
    fuzzCheck(lunet_pcall(L, 0, 0) == LUA_OK, "the fuzzer's Lua failed: \(luaMessage(L, -1))")
}

/// The value at `index` as text (for messages).
public func luaMessage(_ L: OpaquePointer, _ index: Int32) -> String {
    var n = 0
    if lua_type(L, index) == LUA_TSTRING, let p = lua_tolstring(L, index, &n) {
        return String(decoding: UnsafeRawBufferPointer(start: p, count: n), as: UTF8.self)
    }
    if lua_type(L, index) == LUA_TTABLE {
        _ = lunet_rawgetfield(L, index, "message")
        defer { lunet_pop(L, 1) }
        if lua_type(L, -1) == LUA_TSTRING, let p = lua_tolstring(L, -1, &n) {
            return "error object: " + String(decoding: UnsafeRawBufferPointer(start: p, count: n), as: UTF8.self)
        }
    }
    return "(a \(String(cString: lua_typename(L, lua_type(L, index)))))"
}

/// Pushes the global `name` (raw access; the fuzzers' globals are plain).
public func fuzzPushGlobal(_ L: OpaquePointer, _ name: String) {
    lua_rawgeti(L, lunet_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
    _ = lunet_rawgetfield(L, -1, name)
    lunet_remove(L, -2)
}

/// Pushes `bytes` as a Lua string.
public func fuzzPushBytes(_ L: OpaquePointer, _ bytes: UnsafeRawBufferPointer) {
    lunet_pushbytes(L, bytes.baseAddress, bytes.count)
}

/// A decode function's contract: it returned 1 (a value) or LUNET_RAISE (an error object),
/// and left exactly one value above `top`.
public func fuzzCheckDecodeResult(_ L: OpaquePointer, status: Int32, top: Int32, _ what: String) {
    fuzzCheck(status == 1 || status == LUNET_RAISE, "\(what) returned \(status)")
    fuzzCheck(lua_gettop(L) == top + 1, "\(what) left the stack at \(lua_gettop(L)), expected \(top + 1)")
    if status == LUNET_RAISE {
        fuzzCheck(lua_type(L, -1) == LUA_TTABLE, "\(what) failed without an error object")
    }
}

/// Collects garbage every `every` calls, so a reused state stays small and __gc runs often.
public struct FuzzCollector {
    var calls = 0
    let every: Int
    public init(every: Int = 256) { self.every = every }
    public mutating func tick(_ L: OpaquePointer) {
        calls += 1
        if calls % every == 0 { fuzzRunLua(L, "collectgarbage()", name: "=gc") }
    }
}

/// The bytes of the string at `index` (valid while the string is on the stack).
public func luaBytes(_ L: OpaquePointer, _ index: Int32) -> UnsafeRawBufferPointer {
    var n = 0
    guard let p = lua_tolstring(L, index, &n) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
    return UnsafeRawBufferPointer(start: p, count: n)
}

/// A fuzzer's `main`: libFuzzer's driver over `target`.
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                     _ target: lunet_fuzz_target) -> Int32 {
    lunet_fuzz_run(argc, argv, target)
}

/// Calls `table[name]` (the table at absolute index `table`) as Lua would, through the
/// trampoline and under lunet_pcall, with the arguments `arguments` pushes (it returns how
/// many). Leaves one value: the result, or the error value. True when the call succeeded.
public func fuzzCall(_ L: OpaquePointer, _ table: Int32, _ name: String, _ arguments: () -> Int32) -> Bool {
    fuzzCheck(lua_checkstack(L, 20) != 0, "the Lua stack is full")
    let type = lunet_rawgetfield(L, table, name)
    fuzzCheck(type == LUA_TFUNCTION, "\(name) is not a function")
    let n = arguments()
    return lunet_pcall(L, n, 1) == LUA_OK
}

/// Whether the error value at `index` is an error object of `kind` (what lunet's functions
/// raise for bad input); anything else (a string from a crash in Lua, a missing kind) is not.
public func isErrorObject(_ L: OpaquePointer, _ index: Int32, kind: String) -> Bool {
    guard lua_type(L, index) == LUA_TTABLE else { return false }
    _ = lunet_rawgetfield(L, index, "kind")
    defer { lunet_pop(L, 1) }
    return lua_type(L, -1) == LUA_TSTRING && luaBytes(L, -1).elementsEqual(kind.utf8)
}
