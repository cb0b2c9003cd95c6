import CLunetLaunch
import Glibc
import LunetCore
import LunetLua

// The `lunet` executable: parse the command line, make a host, run what was asked, and close
// the host before leaving (so cookie files are saved and every transfer is stopped cleanly).

// Before this line ran: malloc tuning and, for a command line that will send, the libcurl
// preload (CLunetLaunch/launch.c, an ELF constructor).
_ = lunet_launch_linked()
/// The arguments, from launch.c (see lunet_launch_arguments: not through Swift's CommandLine).
let processArguments: [String] = {
    var count: Int32 = 0
    guard let argv = lunet_launch_arguments(&count) else { return [] }
    return (0..<Int(count)).map { i in argv[i].map { String(cString: $0) } ?? "" }
}()
SanitizerArgv.record(processArguments)
/// The arguments' bytes as the process got them: Swift's String repairs bytes that are not UTF-8
/// (U+FFFD), which would change a script's argument or a request's body given on the line.
let processArgumentBytes: [[UInt8]] = {
    var count: Int32 = 0
    guard let argv = lunet_launch_arguments(&count) else { return [] }
    return (0..<Int(count)).map { i in
        guard let p = argv[i] else { return [] }
        return Array(UnsafeBufferPointer(start: UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self), count: strlen(p)))
    }
}()
/// The bytes of `arguments`, the last of the process's arguments (every mode hands Lua a tail of
/// them); nil when they are not that tail.
func rawArguments(_ arguments: [String]) -> [[UInt8]]? {
    guard arguments.count <= processArgumentBytes.count else { return nil }
    let tail = Array(processArgumentBytes.suffix(arguments.count))
    for (bytes, string) in zip(tail, arguments) where String(decoding: bytes, as: UTF8.self) != string { return nil }
    return tail
}
signal(SIGPIPE, SIG_IGN)
// A file-size limit (ulimit -f) must fail the write with EFBIG, which downloads report as kind
// "io", instead of killing the process.
signal(SIGXFSZ, SIG_IGN)

let invocation: Invocation
do {
    invocation = try Invocation.parse(processArguments)
} catch {
    writeError("lunet: \(error)\n")
    leave(2)
}

// libcurl may be opened on another thread while Lua starts (CLunetCurl/curl_loader.c): before
// main for the command lines launch.c recognises; here for every one-shot request (which always
// sends); when a script first names `http`. Asking again once it started does nothing.
// Every way out of the process below waits for that thread first (leave(), and os.exit).
CurlGlobal.allowPreload()
if case .request = invocation.mode { CurlGlobal.preload() }

switch invocation.mode {
case .help:
    print(Invocation.usage)
    leave(0)
case .version:
    print("lunet \(LunetCore.Lunet.version) (\(LuaHost.luaRelease)) \(CurlGlobal.version)")
    // Which libcurl, which flavour, what it gives (docs/libcurl.md).
    if case .success(let info) = LibcurlInfo.loaded() { print(info.summary) }
    leave(0)
default:
    break
}

let host: LuaHost
do {
    host = try LuaHost(ignoreEnvironment: invocation.ignoreEnvironment)
} catch {
    writeError("lunet: \(error)\n")
    leave(1)
}

var status: Int32 = 0
if case .test(let arguments) = invocation.mode {
    // The runner returns the exit status; leave at once (a timed-out test's work is abandoned).
    host.setScriptArguments(interpreter: [processArguments[0]], script: "test", arguments: arguments, raw: rawArguments(arguments))
    host.setGlobal("__lunet_binary", .string(processArguments[0]))
    let code = host.run(.string("""
        local args, binary = table.move(arg, 1, #arg, 1, {}), __lunet_binary
        __lunet_binary = nil
        io.stdout:flush()
        os.exit(require("lunet.testing").main(args, { lunet = binary }), true)
        """, name: "=lunet test"))
    leave(code)
}
/// `lunet load`, `lunet api`, `lunet grpc`: `module`'s main(args) (lua/lunet/...) gives the
/// exit status.
func runSubcommand(_ arguments: [String], name: String, module: String) -> Never {
    host.setScriptArguments(interpreter: [processArguments[0]], script: name, arguments: arguments, raw: rawArguments(arguments))
    let code = host.run(.string("""
        local args = table.move(arg, 1, #arg, 1, {})
        local status = require("\(module)").main(args)
        io.stdout:flush()
        os.exit(status, true)
        """, name: "=lunet \(name)"))
    leave(code)
}
if case .load(let arguments) = invocation.mode { runSubcommand(arguments, name: "load", module: "lunet.load") }
if case .api(let arguments) = invocation.mode { runSubcommand(arguments, name: "api", module: "lunet.openapi.cli") }
if case .grpc(let arguments) = invocation.mode { runSubcommand(arguments, name: "grpc", module: "lunet.grpc.cli") }
if case .importer(let arguments) = invocation.mode { runSubcommand(arguments, name: "import", module: "lunet.import") }
if case .request(let arguments) = invocation.mode {
    // The one-shot command line (lua/lunet/cli/main.lua) returns the exit status.
    host.setScriptArguments(interpreter: [processArguments[0]], script: "", arguments: arguments, raw: rawArguments(arguments))
    let code = host.run(.string("""
        local args = table.move(arg, 1, #arg, 1, {})
        local status = require("lunet.cli.main").main(args)
        io.stdout:flush()
        os.exit(status, true)
        """, name: "=lunet"))
    host.close()
    leave(code)
}
if let har = invocation.har {
    host.setGlobal("__lunet_har", .string(har))
    _ = host.run(.string("http.record(__lunet_har); __lunet_har = nil", name: "=--har"))
}
if case .script(let path) = invocation.mode, !path.isEmpty {   // "": -e chunks alone
    host.setScriptArguments(interpreter: invocation.interpreterArguments, script: path, arguments: invocation.scriptArguments,
                            raw: rawArguments(invocation.scriptArguments))
} else {
    // No script (-e chunks, the prompt): as lua5.4, the interpreter's name at 0, its options after.
    let interpreter = invocation.interpreterArguments
    let arguments = Array(interpreter.dropFirst()) + invocation.scriptArguments
    host.setScriptArguments(interpreter: [], script: interpreter.first ?? "lunet", arguments: arguments, raw: rawArguments(arguments))
}

// As lua5.4: LUA_INIT_5_4 (else LUA_INIT) first, a chunk or "@file"; then -W; then -e and -l
// in the order given.
if !invocation.ignoreEnvironment, let initCode = getenv("LUA_INIT_5_4").map({ String(cString: $0) }) ?? getenv("LUA_INIT").map({ String(cString: $0) }) {
    let name = getenv("LUA_INIT_5_4") != nil ? "=LUA_INIT_5_4" : "=LUA_INIT"
    status = initCode.hasPrefix("@") ? host.run(.file(String(initCode.dropFirst()))) : host.run(.string(initCode, name: name))
}
if status == 0 && invocation.warnings { _ = host.run(.string("warn('@on')", name: "=-W")) }
let codeSteps = invocation.steps.filter { if case .code = $0 { true } else { false } }.count
var codeIndex = 0
for step in invocation.steps where status == 0 {
    switch step {
    case .code(let chunk):
        codeIndex += 1
        status = host.run(.string(chunk, name: codeSteps == 1 ? "=(command line)" : "=(command line \(codeIndex))"))
    case .require(let global, let module):
        host.setGlobal("__lunet_require", .array([.string(global), .string(module)]))
        status = host.run(.string("local g, m = __lunet_require[1], __lunet_require[2]; __lunet_require = nil; _G[g] = require(m)", name: "=-l " + module))
    }
}
if status == 0, case .script(let path) = invocation.mode, !path.isEmpty {
    status = host.run(.file(path), arguments: invocation.scriptArguments)
    // A missing file named like neither a script nor a host (`lunet api2`): perhaps a URL.
    if status != 0, path != "-", !path.lowercased().hasSuffix(".lua"), !path.contains("/"), !Invocation.fileExists(path) {
        fputs("lunet: for a URL, add http:// or a method: lunet GET http://\(path)\n", stderr)
    }
}
if invocation.mode == .repl || invocation.interactive {
    status = REPL(host: host).run()
}
host.close()
leave(status)

/// Exits once a libcurl preload thread (if any) has finished: exit handlers must not run
/// while curl_global_init is registering its own.
func leave(_ code: Int32) -> Never {
    CurlGlobal.waitForPreload()
    HTTPCache.flushAll()   // the disk tier's queued writes (Cache/CacheDiskWriter.swift)
    exit(code)
}

func writeError(_ text: String) {
    var t = text
    t.withUTF8 { buf in _ = write(2, buf.baseAddress, buf.count) }
}
