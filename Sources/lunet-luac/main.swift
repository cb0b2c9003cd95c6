import CLunetLua
import Glibc

// lunet-luac OUTPUT.swift ROOT FILE...: compiles each Lua file (chunk name "@PATH-FROM-ROOT")
// and writes a Swift file with the bytecode and the source, base64-encoded, one entry per file.
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
var entries: [String] = []
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
    entries.append("        (\"\(module)\", \"\(relative)\", \"\(base64(dump.bytes))\", \"\(base64(source))\"),")
}

extension String {
    func replacingSlashes() -> String { String(map { $0 == "/" ? "." : $0 }) }
}

let text = """
// Generated at build time by lunet-luac from the files under lua/. Do not edit.
enum EmbeddedLua {
    /// (module, path, bytecode in base64, source in base64)
    static let files: [(module: StaticString, path: StaticString, bytecode: StaticString, source: StaticString)] = [
\(entries.joined(separator: "\n"))
    ]
}

"""
// Write only when the content changed, so unchanged Lua does not recompile the target.
if let old = readFile(output), old == Array(text.utf8) { exit(0) }
guard let f = fopen(output, "wb") else {
    fail("lunet-luac: cannot write \(output)")
}
fputs(text, f)
fclose(f)
