import CLunetLua
import Glibc

// lunet-luac OUTPUT.swift ROOT FILE...: compiles each Lua file (chunk name "@PATH-FROM-ROOT")
// and writes a Swift file with the bytecode and the source, base64-encoded (the files' names, then
// all the bytecode and all the sources, in the order the modules are usually loaded).
// Used by the EmbedLua build plugin; fails the build on a syntax error, naming the file.

func fail(_ message: String, status: Int32 = 1) -> Never {
    var m = message + "\n"
    m.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(status)
}

let args = CommandLine.arguments
guard args.count >= 3 else {
    fail("usage: lunet-luac OUTPUT.swift ROOT FILE...", status: 2)
}
let output = args[1]
let root = args[2].hasSuffix("/") ? args[2] : args[2] + "/"

func readFile(_ path: String) -> [UInt8]? {
    guard let f = fopen(path, "rb") else { return nil }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&chunk, 1, chunk.count, f)
        if n <= 0 { break }
        bytes += chunk[0..<n]
    }
    return bytes
}

let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
func base64(_ b: [UInt8]) -> String {
    var out: [UInt8] = []
    out.reserveCapacity((b.count + 2) / 3 * 4)
    var i = 0
    while i < b.count {
        let n = b.count - i
        let v = UInt32(b[i]) << 16 | (n > 1 ? UInt32(b[i + 1]) << 8 : 0) | (n > 2 ? UInt32(b[i + 2]) : 0)
        out.append(alphabet[Int(v >> 18 & 63)])
        out.append(alphabet[Int(v >> 12 & 63)])
        out.append(n > 1 ? alphabet[Int(v >> 6 & 63)] : 61)
        out.append(n > 2 ? alphabet[Int(v & 63)] : 61)
        i += 3
    }
    return String(decoding: out, as: UTF8.self)
}

final class DumpBuffer { var bytes: [UInt8] = [] }
let writer: lua_Writer = { _, p, size, ud in
    let buffer = Unmanaged<DumpBuffer>.fromOpaque(ud!).takeUnretainedValue()
    buffer.bytes += UnsafeRawBufferPointer(start: p, count: size)
    return 0
}

let L = luaL_newstate()!
struct Entry { let module: String, path: String, bytecode: String, source: String }
var entries: [Entry] = []
for path in args.dropFirst(3) {
    let relative = path.hasPrefix(root) ? String(path.dropFirst(root.count)) : path
    guard let source = readFile(path) else {
        fail("lunet-luac: cannot read \(path)")
    }
    let status = source.withUnsafeBufferPointer { b in
        b.withMemoryRebound(to: CChar.self) { luaL_loadbufferx(L, $0.baseAddress, $0.count, "@" + relative, "t") }
    }
    guard status == LUA_OK else {
        fail("lunet-luac: \(String(cString: lua_tolstring(L, -1, nil)))")
    }
    let dump = DumpBuffer()
    lua_dump(L, writer, Unmanaged.passUnretained(dump).toOpaque(), 0)   // keep line info for tracebacks
    lua_settop(L, 0)
    // lua/lunet/http.lua -> lunet.http ; lua/foo/init.lua -> foo
    var module = relative.hasPrefix("lua/") ? String(relative.dropFirst(4)) : relative
    if module.hasSuffix(".lua") { module.removeLast(4) }
    if module.hasSuffix("/init") { module.removeLast(5) }
    module = module.replacingSlashes()
    entries.append(Entry(module: module, path: relative, bytecode: base64(dump.bytes), source: base64(source)))
}

// The bytecode of the modules every start loads, then those of a plain request, then the
// one-shot command line's, then the rest; all the sources after all the bytecode. The text is
// mapped from the executable as the modules load, and the kernel maps 64 KB around each page
// touched: with each module's source beside its bytecode, and the modules a GET needs spread
// through the alphabet, a GET kept ~1.1 MB of this text resident, for ~150 KB it reads. Two
// string literals, not one per file: a linker merging string constants (lld) may reorder
// separate literals, never the bytes inside one.
let loadOrder = ["lunet.prelude", "lunet.runtime", "lunet.errors", "lunet.task",
                 "lunet.http", "lunet.url", "lunet.headers", "lunet.response", "lunet.serializers"]
func rank(_ e: Entry) -> (Int, String) {
    if let i = loadOrder.firstIndex(of: e.module) { return (i, e.module) }
    return (e.module.hasPrefix("lunet.cli") ? loadOrder.count : loadOrder.count + 1, e.module)
}
entries.sort { rank($0) < rank($1) }

extension String {
    func replacingSlashes() -> String { String(map { $0 == "/" ? "." : $0 }) }
}

var rows: [String] = []
var allBytecode = "", allSources = ""
for e in entries {
    let b = allBytecode.utf8.count, s = allSources.utf8.count
    allBytecode += e.bytecode
    allSources += e.source
    rows.append("        (\"\(e.module)\", \"\(e.path)\", \(b)..<\(allBytecode.utf8.count), \(s)..<\(allSources.utf8.count)),")
}

let text = """
// Generated at build time by lunet-luac from the files under lua/. Do not edit.
enum EmbeddedLua {
    /// (module, path, where its bytecode is in allBytecode, where its source is in allSources)
    static let files: [(module: StaticString, path: StaticString, bytecode: Range<Int>, source: Range<Int>)] = [
\(rows.joined(separator: "\n"))
    ]
    /// File i's bytecode and source, base64.
    static func bytecode(_ i: Int) -> UnsafeBufferPointer<UInt8> { slice(allBytecode, files[i].bytecode) }
    static func source(_ i: Int) -> UnsafeBufferPointer<UInt8> { slice(allSources, files[i].source) }
    private static func slice(_ text: StaticString, _ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: text.utf8Start + range.lowerBound, count: range.count)
    }
    private static let allBytecode: StaticString = "\(allBytecode)"
    private static let allSources: StaticString = "\(allSources)"
}

"""
// Write only when the content changed, so unchanged Lua does not recompile the target.
if let old = readFile(output), old == Array(text.utf8) { exit(0) }
guard let f = fopen(output, "wb") else {
    fail("lunet-luac: cannot write \(output)")
}
fputs(text, f)
fclose(f)
