import CLunetLua
import Glibc

// lunet-luac OUTPUT.swift ROOT FILE...: compiles each Lua file (chunk name "@PATH-FROM-ROOT")
// and writes a Swift file with the bytecode and the source as string-literal text (the files' names, then
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

// The embedded bytes are string-literal text in which every byte is below 0x80, so that the
// compiler stores each as one UTF-8 byte: seven bytes of a file become eight of text, seven bits
// each (the 56 bits of the seven read as a little-endian number, low bits first). Lua bytecode
// has a fifth of its bytes at 0x80 or above; storing each byte as the scalar of its value (two
// UTF-8 bytes from 0x80) took 1.19 bytes a byte and a branch a byte to decode: a tenth of the
// instructions of `lunet -e 'print(1)'`, 1.1M of a one-shot GET's 22.8M. Seven-in-eight takes
// 1.14 bytes a byte and decodes eight bytes at a time with shifts and masks, no branch
// (EmbeddedText.decode; print(1) 2.48M -> 2.24M instructions, the GET 21.7M). The
// last group is padded with zero bytes; the files table keeps each file's real size.
// Returns the literal's text and how many bytes the compiled literal holds.
func literal(_ bytes: [UInt8]) -> (text: String, count: Int) {
    var packed: [UInt8] = []
    packed.reserveCapacity((bytes.count + 6) / 7 * 8)
    var i = 0
    while i < bytes.count {
        var v: UInt64 = 0
        for k in 0..<7 where i + k < bytes.count { v |= UInt64(bytes[i + k]) << (8 * UInt64(k)) }
        for k in 0..<8 { packed.append(UInt8(truncatingIfNeeded: v >> (7 * UInt64(k))) & 0x7F) }
        i += 7
    }
    var text: [UInt8] = []
    text.reserveCapacity(packed.count + packed.count / 4)
    for b in packed {
        switch b {
        case 0x22: text += Array("\\\"".utf8)
        case 0x5C: text += Array("\\\\".utf8)
        case 0x20...0x7E: text.append(b)
        default: text += Array("\\u{\(String(b, radix: 16))}".utf8)
        }
    }
    return (String(decoding: text, as: UTF8.self), packed.count)
}

final class DumpBuffer { var bytes: [UInt8] = [] }
let writer: lua_Writer = { _, p, size, ud in
    let buffer = Unmanaged<DumpBuffer>.fromOpaque(ud!).takeUnretainedValue()
    buffer.bytes += UnsafeRawBufferPointer(start: p, count: size)
    return 0
}

let L = luaL_newstate()!
struct Entry { let module: String, path: String, bytecode: [UInt8], source: [UInt8] }
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
    entries.append(Entry(module: module, path: relative, bytecode: dump.bytes, source: source))
}

// The bytecode of the modules every start loads, then those of a plain request, then the
// one-shot command line's, then the rest; all the sources after all the bytecode. The text is
// mapped from the executable as the modules load, and the kernel maps 64 KB around each page
// touched: with each module's source beside its bytecode, and the modules a GET needs spread
// through the alphabet, a GET kept ~1.1 MB of this text resident, for ~150 KB it reads. Two
// string literals, not one per file: a linker merging string constants (lld) may reorder
// separate literals, never the bytes inside one.
let loadOrder = ["lunet.prelude", "lunet.runtime", "lunet.errors", "lunet.task", "lunet.features",
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
var bytecodeCount = 0, sourceCount = 0
for e in entries {
    let b = literal(e.bytecode), s = literal(e.source)
    allBytecode += b.text
    allSources += s.text
    rows.append("        (\"\(e.module)\", \"\(e.path)\", \(bytecodeCount)..<\(bytecodeCount + b.count), \(e.bytecode.count), \(sourceCount)..<\(sourceCount + s.count), \(e.source.count)),")
    bytecodeCount += b.count
    sourceCount += s.count
}

let text = """
// Generated at build time by lunet-luac from the files under lua/. Do not edit.
enum EmbeddedLua {
    /// (module, path, where its bytecode is in allBytecode and its size, where its source is in
    /// allSources and its size)
    static let files: [(module: StaticString, path: StaticString, bytecode: Range<Int>, bytecodeSize: Int, source: Range<Int>, sourceSize: Int)] = [
\(rows.joined(separator: "\n"))
    ]
    /// File i's bytecode and source (EmbeddedText.decode of their text).
    static func bytecode(_ i: Int) -> [UInt8] { EmbeddedText.decode(slice(allBytecode, files[i].bytecode), count: files[i].bytecodeSize) }
    static func source(_ i: Int) -> [UInt8] { EmbeddedText.decode(slice(allSources, files[i].source), count: files[i].sourceSize) }
    /// Both literals, whole (the host gives their pages back once modules are loaded).
    static var texts: [UnsafeRawBufferPointer] {
        [allBytecode, allSources].map { UnsafeRawBufferPointer(start: $0.utf8Start, count: $0.utf8CodeUnitCount) }
    }
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
